import CMonoClock
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
    ///   timer is removed at once; a cancel that comes while this scheduler's
    ///   thread spins toward the deadline of a task it runs throws at the
    ///   deadline); ``PrecisionTimerError/unsupportedClock(_:)``
    ///   on `monotonicRaw` (even with a deadline already past). A negative
    ///   tolerance is zero (see *Bad input*). A saturated deadline
    ///   (``PrecisionClock/Instant/max``) is "never": the task sleeps until it is
    ///   cancelled.
    ///
    /// Runs on the caller's actor (`nonisolated(nonsending)`): an actor whose
    /// executor is this scheduler, or a task that prefers it, registers the timer
    /// and is resumed on this scheduler's thread with no hop in between.
    nonisolated(nonsending)
    public func sleep(until deadline: PrecisionClock.Instant, on clock: PrecisionClock = .monotonic,
                      tolerance: Duration? = nil) async throws {
        try clock.requireSleepable()
        try await engine.sleep(until: deadline.nanoseconds, source: clock.source, leeway: tolerance ?? .zero,
                               isolation: #isolation)
    }

}
