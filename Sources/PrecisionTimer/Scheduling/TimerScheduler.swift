import CMonoClock
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns one thread and the queues of deadlines it serves: the engine behind every
/// timer in PrecisionTimer.
///
/// Use ``shared`` for ordinary work; make your own to give a control loop a thread
/// of its own (optionally realtime and pinned to a CPU), so nothing else that
/// runs on the shared one can delay it.
///
/// - Repeating timers are drift-free: tick `k` is due at exactly
///   `start + k × interval`, the product exact and rounded once to the nanosecond,
///   however late earlier ticks ran.
/// - Leeway coalesces: the thread wakes at the earliest latest-acceptable instant
///   among pending timers (with its kernel timer slack set to what that allows)
///   and fires everything due, so many timers with leeway cost few wake-ups.
///   Timers with no leeway get the hybrid wait's precision (sleep, then spin).
/// - A timer added from another thread that becomes the earliest wakes the
///   thread at once through a futex doorbell.
/// - A timer due more than about 67 ms out waits in a hierarchical timing wheel:
///   scheduling, cancelling and pushing it back are O(1) however many are live.
///   As their slot comes near, and for timers scheduled nearer, they wait in a
///   sorted run (O(1) per fire) or in heaps (O(log n)).
///
/// Releasing the last reference to a ``TimerScheduler`` ends its thread once it
/// has no live timers; timers already scheduled keep working until then.
public final class TimerScheduler: Sendable {
    /// How a scheduler's thread is set up.
    public struct Options: Sendable, Hashable {
        /// The scheduling class of the thread.
        public enum Priority: Sendable, Hashable {
            /// SCHED_OTHER, the default.
            case normal
            /// SCHED_FIFO at this priority (``ThreadControls/realtimePriorityRange``).
            /// When the system refuses, the scheduler keeps working at normal
            /// priority and ``TimerScheduler/threadReport`` says why.
            case realtime(Int)
        }

        /// The thread's scheduling class. Default ``Priority/normal``.
        public var priority: Priority
        /// Pin the thread to this CPU. Default: none.
        public var cpu: Int?
        /// The time slice the thread asks of Linux's fair scheduler (see
        /// ``ThreadControls/setTimeSlice(_:)``): woken at a deadline, a thread
        /// with a shorter slice than the thread running on its CPU preempts
        /// it, instead of waiting up to the rest of that thread's slice (the
        /// kernel's default is over a millisecond) when no other CPU is free. Linux 6.12 and later
        /// honour it; ``TimerScheduler/threadReport`` shows what the kernel
        /// keeps. Not asked for under a granted ``Priority/realtime(_:)``
        /// priority. Nil or zero: the kernel's default. Default 100 µs, the
        /// shortest the kernel allows.
        public var timeSlice: Duration? = .microseconds(100)
        /// Whether zero-leeway timers may spin before their deadline (the hybrid
        /// wait: sub-microsecond, at the cost of the learned margin of CPU per
        /// wake-up) or must only sleep (kernel latency, no spinning). Default true.
        public var allowsSpinning: Bool
        /// The thread's name (at most 15 bytes are kept by Linux); also the
        /// scheduler's name in its log messages and metrics.
        public var name: String
        /// Whether fires record their lateness, and inline handlers and jobs
        /// their run time, into ``TimerScheduler/statistics`` (a clock read
        /// after each, and a few nanoseconds per fire). Counts are kept either
        /// way. Default true.
        public var recordsStatistics = true
        /// An inline handler call or a job on the scheduler's thread that runs
        /// longer than this is logged at `debug` (it delays every timer due
        /// meanwhile). Measured only while ``recordsStatistics`` is on; a
        /// negative value counts as zero. Default 1 ms.
        public var slowCallThreshold = Duration.milliseconds(1)
        /// Whether the thread blocks asynchronous signals (as libdispatch's
        /// worker threads do), so a process-directed signal is handled elsewhere.
        /// Tests turn it off to prove that correctness never depends on it.
        var blocksAsyncSignals = true
        /// The shortest spin before a zero-leeway deadline, in nanoseconds (0: the
        /// learned margin alone). Tests raise it to know when the thread spins.
        var minimumSpinMargin: Int64 = 0

        /// Options for a scheduler's thread; the defaults are those of ``TimerScheduler/shared``.
        ///
        /// - Parameters:
        ///   - priority: the scheduling class; ``Priority/realtime(_:)`` asks for SCHED_FIFO.
        ///   - cpu: the CPU to pin the thread to, or nil to let it run anywhere.
        ///   - allowsSpinning: whether zero-leeway timers may spin the last stretch
        ///     before their deadline (see ``allowsSpinning``).
        ///   - name: the thread's name, as tools such as `top -H` show it.
        ///
        /// Nothing is checked here: ``TimerScheduler/init(options:logger:)`` validates the
        /// priority, the CPU and ``timeSlice`` when the scheduler is made.
        public init(priority: Priority = .normal, cpu: Int? = nil, allowsSpinning: Bool = true,
                    name: String = "PrecisionTimer") {
            self.priority = priority
            self.cpu = cpu
            self.allowsSpinning = allowsSpinning
            self.name = name
        }
    }

    /// Whether a realtime priority was asked for and granted.
    public enum RealtimeStatus: Sendable, Hashable {
        /// The options asked for ``Options/Priority/normal``.
        case notRequested
        /// The thread runs SCHED_FIFO at `priority`.
        case granted(priority: Int)
        /// The system refused; the thread runs at normal priority.
        case refused(PrecisionTimerError.Errno)
    }

    /// What the scheduler thread got of what its options asked.
    public struct ThreadReport: Sendable, Hashable {
        /// What became of the realtime priority the options asked for.
        public var realtime: RealtimeStatus = .notRequested
        /// Set when pinning to ``Options/cpu`` failed.
        public var affinityError: PrecisionTimerError.Errno?
        /// The thread's time slice as the kernel reports it (see
        /// ``Options/timeSlice`` and ``ThreadControls/timeSlice()``): the one
        /// asked for, or the kernel's default; nil where the kernel reports
        /// none (before Linux 6.12).
        public var timeSlice: Duration?
        /// Set when the kernel refused ``Options/timeSlice``.
        public var timeSliceError: PrecisionTimerError.Errno?
    }

    /// The shared scheduler, with default options; its thread starts on first use.
    public static let shared = TimerScheduler(validated: Options())

    let engine: TimerEngine

    /// A scheduler with a thread of its own.
    ///
    /// `logger` receives the scheduler's rare events, at `debug` only: a
    /// realtime priority, CPU or time slice the system refused, the system time set, an
    /// inline handler or job past ``Options/slowCallThreshold``, a thread that
    /// could not be started. Nothing is logged on the path of a fire. Default:
    /// a logger labelled `PrecisionTimer`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a realtime
    ///   priority outside ``ThreadControls/realtimePriorityRange``, a CPU outside
    ///   the calling thread's ``ThreadControls/allowedCPUs`` or a negative
    ///   ``Options/timeSlice``;
    ///   ``PrecisionTimerError/system(_:operation:)`` when the thread cannot be
    ///   created (`EAGAIN`: the process is out of threads). A realtime request
    ///   or time slice the system refuses is not an error: see ``threadReport``.
    public convenience init(options: Options = Options(), logger: Logger = Logger(label: "PrecisionTimer")) throws {
        if case .realtime(let p) = options.priority, !ThreadControls.realtimePriorityRange.contains(p) {
            throw PrecisionTimerError.invalidArgument(
                "realtime priority \(p) is outside \(ThreadControls.realtimePriorityRange)")
        }
        if let cpu = options.cpu {
            try ThreadControls.requireAllowedCPU(cpu)  // the new thread inherits the caller's mask
        }
        _ = try options.timeSlice?.checkedNotNegative("the time slice")
        var engineOptions = options.engineOptions
        engineOptions.logger = logger
        let engine = TimerEngine(options: engineOptions, clock: KernelClock.shared)
        let rc = engine.startThread()
        guard rc == 0 else {
            let errno = PrecisionTimerError.Errno(rawValue: rc)
            logger.debug("could not start a scheduler thread", metadata: ["scheduler": "\(options.name)",
                                                                           "error": "\(errno)"])
            throw PrecisionTimerError.system(errno, operation: "pthread_create")
        }
        self.init(engine: engine)
    }

    private init(engine: TimerEngine) {
        self.engine = engine
    }

    /// The shared scheduler's making: it cannot throw, so a thread that cannot
    /// be created there stops the process with the reason (the library cannot
    /// serve any timer without it).
    private convenience init(validated options: Options) {
        let engine = TimerEngine(options: options.engineOptions, clock: KernelClock.shared)
        let rc = engine.startThread()
        // fatalError, not precondition: the reason is printed in optimised builds too.
        guard rc == 0 else {
            fatalError("PrecisionTimer: cannot start the shared scheduler's thread (\(PrecisionTimerError.Errno(rawValue: rc)))")
        }
        self.init(engine: engine)
    }

    /// A scheduler without a thread, driven by `clock`: its timers fire when the
    /// test calls ``VirtualClock/advance(by:)-9eb22``. One clock may drive several
    /// schedulers; their timers then fire in time order across them.
    ///
    /// It records ``statistics`` in virtual time (a handler's run time is the
    /// ``VirtualClock/busy(for:)`` it models), and logs to `logger` as a real
    /// scheduler does.
    public init(clock: VirtualClock, logger: Logger = Logger(label: "PrecisionTimer")) {
        var options = EngineOptions()
        options.name = "virtual"
        options.logger = logger
        engine = TimerEngine(options: options, clock: clock)
        clock.attach(engine)
    }

    deinit {
        engine.requestShutdown()
    }

    /// What the thread got of its options (realtime priority, CPU pinning,
    /// time slice).
    public var threadReport: ThreadReport {
        let setup = engine.threadSetup.withLock { $0 }
        var report = ThreadReport()
        switch setup.realtime {
        case nil: report.realtime = .notRequested
        case .success(let priority): report.realtime = .granted(priority: priority)
        case .failure(let errno): report.realtime = .refused(errno)
        }
        report.affinityError = setup.affinityError
        report.timeSlice = setup.timeSlice.map { .nanoseconds($0) }
        report.timeSliceError = setup.timeSliceError
        return report
    }

    /// What the scheduler recorded since it was made or last reset: lateness
    /// per clock, handler and job run times, counts. A copy, safe from any
    /// thread; taking it does not wait for the scheduler's thread.
    public var statistics: TimerStatistics { engine.statistics() }

    /// Starts ``statistics`` again from now: histograms and counts (the live
    /// timers and wall-clock changes are kept). A copy taken before keeps its
    /// figures.
    public func resetStatistics() { engine.resetStatistics() }

    /// The scheduler's name: its thread's (``Options/name``), or `virtual` for
    /// one driven by a ``VirtualClock``. Log messages and metrics carry it.
    public var name: String { engine.options.name }

    /// The virtual clock driving this scheduler, or nil for a real one.
    public var virtualClock: VirtualClock? { engine.virtualClock }
}

extension TimerScheduler.Options {
    /// The options in the engine's terms.
    var engineOptions: EngineOptions {
        var options = EngineOptions()
        options.name = name
        if case .realtime(let priority) = priority { options.realtimePriority = priority }
        options.cpu = cpu
        options.timeSlice = timeSlice.map { Swift.max(0, $0.saturatingNanoseconds) }
        options.allowsSpinning = allowsSpinning
        options.blocksAsyncSignals = blocksAsyncSignals
        options.minimumSpinMargin = minimumSpinMargin
        options.recordsStatistics = recordsStatistics
        options.slowCallThreshold = Swift.max(0, slowCallThreshold.saturatingNanoseconds)
        return options
    }
}
