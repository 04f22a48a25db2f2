/// `PrecisionClock`'s `Clock.sleep(until:tolerance:)`: async code waits on the
/// shared scheduler's engine, not on a thread of its own.
extension PrecisionClock {
    /// Suspends the current task until `deadline`, without blocking a thread.
    ///
    /// A dedicated timing thread (the shared ``TimerScheduler``) waits for the
    /// deadline and resumes the task. `tolerance` is the timer's leeway: with `nil`
    /// or zero the scheduler wakes with its hybrid-wait precision; with a tolerance
    /// it may coalesce this wake-up with others inside that window. The task never
    /// resumes before `deadline`.
    ///
    /// - Throws: `CancellationError` promptly when the task is cancelled (the timer
    ///   is removed, nothing is left behind); ``PrecisionTimerError/unsupportedClock(_:)``
    ///   on ``Source/monotonicRaw``; ``PrecisionTimerError/invalidArgument(_:)``
    ///   for a negative tolerance. A saturated deadline (``Instant/max``, what
    ///   `now + .seconds(Int64.max)` gives) is "never": the task sleeps until it
    ///   is cancelled, as with `DISPATCH_TIME_FOREVER`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await TimerScheduler.shared.sleep(until: deadline, on: self, tolerance: tolerance)
    }
}
