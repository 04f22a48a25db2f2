import Synchronization

/// Async sleep on the engine: a one-shot timer resumes the sleeping task.
extension TimerScheduler {
    /// Suspends the current task until `deadline` on `clock`, without blocking a
    /// thread: a one-shot timer on this scheduler resumes it.
    ///
    /// - Parameters:
    ///   - deadline: an absolute instant of `clock`; one already past returns at once.
    ///   - clock: the kernel clock `deadline` is on. Default monotonic.
    ///   - tolerance: the timer's leeway; `nil` or zero asks for the
    ///     scheduler's full precision.
    /// - Throws: `CancellationError` when the task is cancelled (promptly: the
    ///   timer is removed at once); ``PrecisionTimerError/unsupportedClock(_:)`` on
    ///   `monotonicRaw`; ``PrecisionTimerError/invalidArgument(_:)`` for a negative
    ///   tolerance (even with a deadline already past). A saturated deadline
    ///   (``PrecisionClock/Instant/max``) is "never": the task sleeps until it is
    ///   cancelled.
    public func sleep(until deadline: PrecisionClock.Instant, on clock: PrecisionClock = .monotonic,
                      tolerance: Duration? = nil) async throws {
        try clock.requireSleepable()
        if let tolerance, tolerance < .zero {
            throw PrecisionTimerError.invalidArgument("tolerance must not be negative (got \(tolerance))")
        }
        try Task.checkCancellation()
        if now(clock.source) >= deadline.nanoseconds { return }
        let sleeper = Sleeper()
        let node = try makeNode(start: deadline, period: .zero, clock: clock, leeway: tolerance ?? .zero,
                                policy: .skip, delivery: .inline, .plain { [sleeper] _ in sleeper.finish(with: nil) })
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                if sleeper.install(continuation) {
                    startTimer(node)
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
