import CMonoClock
import Synchronization

/// Async sleep on the engine: a one-shot timer resumes the sleeping task
/// (the public entry points are in Scheduling/TimerScheduler+Sleep.swift).
extension TimerEngine {
    /// Suspends the calling task until `deadline` on `source` (validated by the
    /// caller), with a one-shot timer on this engine that resumes it.
    ///
    /// The task resumes on `isolation`, the caller's actor (the public callers
    /// are `nonisolated(nonsending)` and pass `#isolation`), or for a nonisolated
    /// caller on its preferred task executor: for code running on this engine's
    /// scheduler, a job queued on this engine's own thread. The closures below
    /// capture `isolation` so that they are isolated to it too: a closure in a
    /// `nonisolated(nonsending)` function would run, and resume, on the global
    /// executor instead (a hop of tens of microseconds for an actor).
    func sleep(until deadline: Int64, source: PrecisionClock.Source, leeway: Duration,
               isolation: isolated (any Actor)?) async throws {
        // A deadline already past returns at once, with no timer (and on this
        // engine's thread without the two switches of executor below: a loop
        // that fell behind catches up at once).
        try Task.checkCancellation()
        if hasCome(deadline, source) { return }
        // Code running on this engine's thread (an actor whose executor is this
        // scheduler, or a task that prefers it) prefers a sleep executor of
        // this engine while it waits, for two reasons. An actor's continuation
        // resumes on the generic executor (the task then hops back to its
        // actor), which for a task without a preference is the global pool, a
        // thread wake-up away: with the preference, it is this thread. And the
        // end of the sleep (this function's library code) becomes jobs of their
        // own, which the spin before the deadline runs early
        // (`runSleepJobsEarly`), so that after the deadline only the job that
        // switches back to the caller's executor is left.
        if isCurrentThreadsEngine {
            let executor = isolation == nil ? sleepExecutors.task : sleepExecutors.actor
            let cancel = CancelReading()
            // A cancel is noted with the time it came, for as long as the sleep
            // lasts: one in the last stretch before the deadline, after the spin
            // toward it has already ended the wait below (a monotonic spin resumes
            // sleeps early), must still throw, as it would have a moment earlier.
            try await withTaskCancellationHandler {
                _ = isolation
                try await withTaskExecutorPreference(executor, isolation: isolation) {
                    try await wait(until: deadline, source: source, leeway: leeway, isolation: isolation)
                    // Tests check this stays 0: the sleep resumed on this thread.
                    if !isCurrentThreadsEngine {
                        sleepsResumedElsewhere.add(1, ordering: .relaxed)
                    }
                }
                // The part above may run ahead of the deadline (only a monotonic
                // spin resumes sleeps early), normally only up to the switch back
                // to the caller's executor; if this gets here early, it waits out
                // the rest, so the caller's code never runs before its deadline.
                // A cancel noted before the deadline throws: at once while this
                // waits, else here, at the deadline (the caller's code was queued
                // behind the spin). Not on the wall clock: its sleeps resume at
                // their fire, and a step back of the system time right after one
                // must not turn this into a long spin.
                if source == .monotonic {
                    while now(source) < deadline {
                        if cancel.reading != nil { throw CancellationError() }
                        cmc_cpu_relax()
                    }
                    if let cancelledAt = cancel.reading, cancelledAt < deadline { throw CancellationError() }
                }
            } onCancel: {
                cancel.note(now(.monotonic))
            }
        } else {
            try await wait(until: deadline, source: source, leeway: leeway, isolation: isolation)
        }
    }

    /// Whether `deadline` has come on `source`. A deadline saturated at
    /// `Int64.max` means "never": it does not come even when (virtual) time
    /// reaches the end of the range, as for timers (`collectLocked`).
    private func hasCome(_ deadline: Int64, _ source: PrecisionClock.Source) -> Bool {
        deadline < .max && now(source) >= deadline
    }

    private func wait(until deadline: Int64, source: PrecisionClock.Source, leeway: Duration,
                      isolation: isolated (any Actor)?) async throws {
        let sleeper = Sleeper()
        // Registered on this engine's thread, the task resumes here too (on a
        // sleep executor of this engine): the fire may then resume it early,
        // before its job is let run.
        let resume: @Sendable (Tick) -> Void = { [sleeper] _ in sleeper.finish(with: nil) }
        let here = isCurrentThreadsEngine
        let node = TimerNode(engine: self, source: source, deadline: deadline, period: .zero,
                             leeway: leeway.clampedLeeway.saturatingNanoseconds, policy: .skip, delivery: .inline,
                             handler: here ? .resumesTaskHere(resume) : .plain(resume))
        try await withTaskCancellationHandler {
            _ = isolation
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                guard sleeper.install(continuation) else { return }
                start(node)
                // Under virtual time, an advance on another thread may have
                // moved time past the deadline since `sleep` read it, before the
                // node was on its queue: no advance would fire it then. The
                // deadline has come, so the sleep ends now. (An advance fires
                // what is due after its last step, so a node queued before
                // that is fired there; one queued after reads the new time here.)
                if clock.isVirtual && hasCome(deadline, source) {
                    node.cancel(waitingForHandler: false)
                    sleeper.finish(with: nil)
                }
            }
        } onCancel: {
            node.cancel(waitingForHandler: false)
            sleeper.finish(with: CancellationError())
        }
    }
}

/// The hand-off between a sleeping task, its timer and its cancellation handler:
/// whichever comes first resumes the continuation, exactly once.
private final class Sleeper: Sendable {
    private enum State {
        case waiting
        case installed(UnsafeContinuation<Void, any Error>)
        case finished(Error?)
    }

    private let state = Locked<State>(.waiting)

    /// Stores the continuation. Returns false if the sleep already ended (the task
    /// was cancelled first), in which case the continuation has been resumed.
    func install(_ continuation: UnsafeContinuation<Void, any Error>) -> Bool {
        let early = state.withLock { s -> Error?? in
            if case .finished(let error) = s { return .some(error) }
            s = .installed(continuation)
            return .none
        }
        guard let early else { return true }
        if let error = early {
            continuation.resume(throwing: error)
        } else {
            continuation.resume()
        }
        return false
    }

    /// Ends the sleep: resumes the continuation if installed (once), or records the
    /// outcome for `install`.
    func finish(with error: Error?) {
        let continuation = state.withLock { s -> UnsafeContinuation<Void, any Error>? in
            switch s {
            case .waiting:
                s = .finished(error)
                return nil
            case .installed(let c):
                s = .finished(error)
                return c
            case .finished:
                return nil
            }
        }
        guard let continuation else { return }
        if let error {
            continuation.resume(throwing: error)
        } else {
            continuation.resume()
        }
    }
}
