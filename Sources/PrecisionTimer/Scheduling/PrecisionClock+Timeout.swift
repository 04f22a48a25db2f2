/// Which came first in ``PrecisionClock/withTimeout(until:tolerance:operation:)``:
/// the operation's result, or the deadline.
public enum TimeoutResult<Success: Sendable>: Sendable {
    /// The operation finished before the deadline, with this value.
    case completed(Success)
    /// The deadline came first: the operation was cancelled (and awaited), or,
    /// for a deadline already past, never started.
    case timedOut

    /// The operation's value, or nil if the deadline came first.
    public var value: Success? {
        if case .completed(let value) = self { return value }
        return nil
    }

    /// Whether the deadline came first.
    public var didTimeOut: Bool {
        if case .timedOut = self { return true }
        return false
    }
}

extension TimeoutResult: Equatable where Success: Equatable {}
extension TimeoutResult: Hashable where Success: Hashable {}

/// Structured timeouts: an operation raced against a deadline of this clock.
extension PrecisionClock {
    /// Runs `operation` until `deadline` on this clock: if the operation finishes
    /// first its value is returned (`.completed`); if the deadline comes first the
    /// operation is cancelled, and this returns `.timedOut` once the operation has
    /// ended: structured, like tokio's `timeout`; no task outlives the call.
    ///
    /// The operation and a ``sleep(until:tolerance:)`` to the deadline run as
    /// the two child tasks of a task group (the children inherit the task's
    /// executor preference, so in a task that prefers a ``TimerScheduler`` both
    /// run on its thread and the sleep is one of its timers; elsewhere the sleep
    /// is a timer of the shared scheduler). Three events race: the operation's
    /// end, the deadline, and a cancel of the calling task. The first of them,
    /// by when each came on this clock (not by which child the group hands
    /// over first), decides: the operation's value or error; `.timedOut`; or
    /// `CancellationError`. The other child is cancelled and awaited either
    /// way. An operation that ends on its own after the deadline but within
    /// `tolerance` may still complete; one that ends after a cancel of the
    /// caller that came after the deadline times out. The operation's end is
    /// the clock's reading when its child task gets its result back, so a
    /// thread preempted between the two (on a busy machine, tens of
    /// microseconds) moves it later: an operation that returns that close
    /// before the deadline may time out. With no tolerance the deadline is
    /// precise, and the scheduler's thread spins its last few microseconds,
    /// taking a core while it does; a timeout that need not be precise to the
    /// microsecond is better given a tolerance. Cancellation is
    /// cooperative: an operation that ignores it still has to finish before
    /// this returns, and what it returns or throws after the event that
    /// decided (the deadline, or the caller's cancel) is dropped, a value it
    /// returns in answer to the caller's cancel included.
    ///
    /// - Parameters:
    ///   - deadline: an instant of this clock. One already past times out at
    ///     once, without starting the operation. ``Instant/max`` is "never": the
    ///     operation runs to its end.
    ///   - tolerance: the deadline's leeway, as in ``sleep(until:tolerance:)``: the
    ///     timeout may come up to this much late, coalesced with other wake-ups.
    ///   - operation: the work to bound. It is cancelled at the deadline, and
    ///     when the calling task is cancelled.
    /// - Returns: `.completed(value)` or `.timedOut`.
    /// - Throws: what `operation` throws before the deadline and before a cancel
    ///   of the calling task; `CancellationError` when the calling task is
    ///   cancelled before the operation ends and before the deadline, whatever
    ///   the operation then returns or throws, or was already cancelled at the
    ///   call (whatever the deadline: the operation does not start);
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on ``Source/monotonicRaw``,
    ///   before the operation starts. A negative tolerance is zero.
    public func withTimeout<Success: Sendable>(
        until deadline: Instant, tolerance: Duration? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try requireSleepable()
        // A cancel is read when it comes from here on, not when a handler is
        // installed after it: the group's own handler below comes later.
        let cancel = CancelReading()
        return try await withTaskCancellationHandler {
            try await race(until: deadline, tolerance: tolerance, cancel: cancel, operation: operation)
        } onCancel: {
            cancel.note(self.now.nanoseconds)
        }
    }

    /// The body of ``withTimeout(until:tolerance:operation:)``, with the
    /// caller's cancel read into `cancel` from its start.
    private func race<Success: Sendable>(
        until deadline: Instant, tolerance: Duration?, cancel: CancelReading,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try Task.checkCancellation()
        #if DEBUG
        TimeoutTestHook.current?(.checked)
        #endif
        if now >= deadline {
            // A cancel that came since the check, and before the deadline, came first.
            if let cancelled = cancel.reading, cancelled < deadline.nanoseconds { throw CancellationError() }
            return .timedOut
        }
        #if DEBUG
        TimeoutTestHook.current?(.racing)
        #endif
        let (operationFirst, ended) = await withTaskGroup(of: TimeoutRace<Success>.self) { group in
            // Inside the group, so that a cancel is read before the group's
            // children learn of it: an operation that answers the cancel ends
            // after the reading.
            await withTaskCancellationHandler {
                group.addTask {
                    do {
                        let value = try await operation()
                        return .finished(.success(value), at: self.now.nanoseconds)
                    } catch {
                        return .finished(.failure(error), at: self.now.nanoseconds)
                    }
                }
                group.addTask {
                    // The deadline, or the caller's cancel: which came first is
                    // decided by the readings below, not by how this ends.
                    try? await self.sleep(until: deadline, tolerance: tolerance)
                    return .deadlineSleepEnded
                }
                var handedOver = 0
                var operationFirst = false
                var ended: (outcome: Result<Success, any Error>, at: Int64)?
                while let child = await group.next() {
                    handedOver += 1
                    if case .finished(let outcome, let at) = child {
                        ended = (outcome, at)
                        operationFirst = handedOver == 1
                    }
                    group.cancelAll()  // the other child ends before we return
                }
                // The operation's child always returns (it catches what the
                // operation throws), and the group awaits both children.
                return (operationFirst, ended!)
            } onCancel: {
                cancel.note(self.now.nanoseconds)
            }
        }
        switch TimeoutRule.decide(operationEndedAt: ended.at, operationFirst: operationFirst,
                                  cancelledAt: cancel.reading, deadline: deadline.nanoseconds,
                                  tolerance: (tolerance ?? .zero).saturatingNanoseconds) {
        case .operation: return .completed(try ended.outcome.get())
        case .timedOut: return .timedOut
        case .cancelled: throw CancellationError()
        }
    }

    /// ``withTimeout(until:tolerance:operation:)`` with the deadline `duration`
    /// from now on this clock (saturating: a huge duration is "never"; zero or
    /// negative times out at once without starting the operation).
    public func withTimeout<Success: Sendable>(
        for duration: Duration, tolerance: Duration? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try await withTimeout(until: now + duration, tolerance: tolerance, operation: operation)
    }
}

#if DEBUG
/// Tests only: where a timeout calls `TimeoutTestHook.current`, so that a test
/// can cancel the caller exactly there (and hold the thread past the deadline,
/// as a preemption would). A task-local: only the test's own task sees it.
enum TimeoutTestHook {
    enum Point: Sendable {
        /// Just after the check for a caller cancelled at the call.
        case checked
        /// Past the check of a deadline already past, before the race starts.
        case racing
    }

    @TaskLocal static var current: (@Sendable (Point) -> Void)?
}
#endif

/// A child of the timeout's task group: the operation's end (its value or
/// error, and when, on the timeout's clock), or the end of the deadline's
/// sleep (at the deadline, or at the caller's cancel).
private enum TimeoutRace<Success: Sendable>: Sendable {
    case finished(Result<Success, any Error>, at: Int64)
    case deadlineSleepEnded
}

/// Which of a timeout's three events came first: the operation's end, the
/// deadline, the caller's cancel, by their instants on the timeout's clock, not
/// by the order in which the task group hands its children over (a child may
/// be handed over late: it waits for a thread, or for an operation that holds
/// the scheduler's thread).
enum TimeoutRule {
    enum Verdict: Equatable {
        /// The operation's value or error.
        case operation
        case timedOut
        case cancelled
    }

    /// - Parameters:
    ///   - operationEndedAt: when the operation returned or threw.
    ///   - operationFirst: whether the group handed the operation's end over
    ///     before the deadline's sleep.
    ///   - cancelledAt: when the caller was first cancelled, if it was.
    ///   - deadline: the deadline's instant.
    ///   - tolerance: the deadline's leeway (negative: zero).
    static func decide(operationEndedAt ended: Int64, operationFirst: Bool, cancelledAt cancelled: Int64?,
                       deadline: Int64, tolerance: Int64) -> Verdict {
        let endedBeforeTheCancel = cancelled.map { ended < $0 } ?? true
        // The operation ended first.
        if ended < deadline && endedBeforeTheCancel { return .operation }
        // The caller's cancel came first.
        if let cancelled, cancelled < deadline && !endedBeforeTheCancel { return .cancelled }
        // The deadline came first. An operation that ended on its own within
        // the tolerance, and was handed over before the deadline's sleep,
        // still completes.
        let window = deadline.saturatingAdd(Swift.max(0, tolerance))
        if operationFirst && ended < window && endedBeforeTheCancel { return .operation }
        return .timedOut
    }
}
