import Logging

/// How an engine's thread is set up and how it waits: what
/// ``TimerScheduler/Options`` asks, in the engine's own terms.
struct EngineOptions: Sendable {
    /// The thread's name (at most 15 bytes are kept by Linux).
    var name = "PrecisionTimer"
    /// SCHED_FIFO at this priority; nil for SCHED_OTHER.
    var realtimePriority: Int?
    /// Pin the thread to this CPU; nil: none.
    var cpu: Int?
    /// The fair scheduler's time slice the thread asks for, ns; nil or 0: the
    /// kernel's default. Not asked for once realtime priority is granted.
    var timeSlice: Int64?
    /// Whether zero-leeway timers may spin before their deadline.
    var allowsSpinning = true
    /// Whether the thread blocks asynchronous signals.
    var blocksAsyncSignals = true
    /// The shortest spin before a zero-leeway deadline, ns (0: the learned margin alone).
    var minimumSpinMargin: Int64 = 0
    /// Whether fires record their lateness and inline handlers and jobs their
    /// run time (``TimerStatistics``); counts are kept either way.
    var recordsStatistics = true
    /// An inline handler or job that runs longer is logged (at `debug`), ns.
    var slowCallThreshold: Int64 = 1_000_000
    /// Where the engine's rare events go; nothing on the hot path.
    var logger = Logger(label: "PrecisionTimer")
}

/// What the engine's thread got of its options.
struct ThreadSetup: Sendable, Hashable {
    /// The realtime priority asked for: granted (the priority) or refused (the
    /// error); nil when none was asked.
    var realtime: Result<Int, PrecisionTimerError.Errno>?
    /// Set when pinning to the CPU failed.
    var affinityError: PrecisionTimerError.Errno?
    /// The thread's time slice as the kernel reports it once set up, ns (nil:
    /// it reports none).
    var timeSlice: Int64?
    /// Set when the kernel refused the time slice asked for.
    var timeSliceError: PrecisionTimerError.Errno?
}

/// The readings of the engine's atomic counters that its statistics count
/// from (taken at the last reset).
struct StatisticsBaseline: Sendable {
    var wakeups: UInt64 = 0
    var jobs: UInt64 = 0
    var spinNanoseconds: UInt64 = 0
}
