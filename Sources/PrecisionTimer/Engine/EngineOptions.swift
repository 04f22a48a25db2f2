/// How an engine's thread is set up and how it waits: what
/// ``TimerScheduler/Options`` asks, in the engine's own terms.
struct EngineOptions: Sendable {
    /// The thread's name (at most 15 bytes are kept by Linux).
    var name = "PrecisionTimer"
    /// SCHED_FIFO at this priority; nil for SCHED_OTHER.
    var realtimePriority: Int?
    /// Pin the thread to this CPU; nil: none.
    var cpu: Int?
    /// Whether zero-leeway timers may spin before their deadline.
    var allowsSpinning = true
    /// Whether the thread blocks asynchronous signals.
    var blocksAsyncSignals = true
    /// The shortest spin before a zero-leeway deadline, ns (0: the learned margin alone).
    var minimumSpinMargin: Int64 = 0
}

/// What the engine's thread got of its options.
struct ThreadSetup: Sendable, Hashable {
    /// The realtime priority asked for: granted (the priority) or refused (the
    /// error); nil when none was asked.
    var realtime: Result<Int, PrecisionTimerError.Errno>?
    /// Set when pinning to the CPU failed.
    var affinityError: PrecisionTimerError.Errno?
}

/// The engine's counters at one moment.
struct EngineCounters: Sendable {
    var wakeups: UInt64
    var fires: UInt64
    var live: Int
    var wallClockChanges: UInt64
    var jobs: UInt64
}
