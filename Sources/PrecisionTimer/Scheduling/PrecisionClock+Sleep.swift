/// `PrecisionClock`'s `Clock.sleep(until:tolerance:)`: async code waits on a
/// scheduler's engine (the one running the caller, else the shared one), not
/// on a thread of its own.
extension PrecisionClock {
    /// Suspends the current task until `deadline`, without blocking a thread.
    ///
    /// A dedicated timing thread waits for the deadline and resumes the task:
    /// the thread of the ``TimerScheduler`` that runs the caller (a task that
    /// prefers it, `withTaskExecutorPreference(scheduler)` or
    /// `Task(executorPreference: scheduler)`, or an actor whose executor it is),
    /// which then resumes the task on that same thread with no hop; from
    /// anywhere else, ``TimerScheduler/shared``, which resumes the task on the
    /// executor it suspended on. `tolerance` is the timer's leeway: with `nil`
    /// or zero the scheduler wakes with its hybrid-wait precision; with a tolerance
    /// it may coalesce this wake-up with others inside that window. The task never
    /// resumes before `deadline`.
    ///
    /// - Throws: `CancellationError` promptly when the task is cancelled (the timer
    ///   is removed, nothing is left behind); on a scheduler's thread, a cancel
    ///   that comes while the thread spins toward the deadline, with the task's
    ///   code already queued behind the spin, throws at the deadline;
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on ``Source/monotonicRaw``.
    ///   A negative tolerance is zero. A saturated deadline (``Instant/max``, what
    ///   `now + .seconds(Int64.max)` gives) is "never": the task sleeps until it
    ///   is cancelled, as with `DISPATCH_TIME_FOREVER`.
    nonisolated(nonsending)
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try requireSleepable()
        let engine = TimerEngine.current ?? TimerScheduler.shared.engine
        try await engine.sleep(until: deadline.nanoseconds, source: source, leeway: tolerance ?? .zero,
                               isolation: #isolation)
    }
}
