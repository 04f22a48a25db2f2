import CMonoClock

/// `VirtualClock` as a `Clock` for async code: Clock-generic code (a retry with
/// backoff, a timeout, swift-async-algorithms' `AsyncTimerSequence`) runs on it
/// unchanged, and a test drives it deterministically.
///
/// The async ``advance(by:)``, ``advance(to:)`` and ``run()``:
/// 1. first run every job already queued on ``executor`` (a task just started
///    runs until it suspends, so its sleeps are registered);
/// 2. then fire what is due, in deadline order, one instant at a time: time
///    stops at each deadline while the tasks that instant woke run, so they read
///    that deadline as ``now``;
/// 3. and return only once every task on ``executor`` that the advance made
///    runnable has run to its next suspension or to its end.
///
/// No yields, no sleeps, no real time: the same test gives the same interleaving
/// every time. All of it happens on the thread of the task that calls the
/// advance; call one advance at a time.
///
/// **Tasks that leave ``executor`` are outside that promise.** A task that hops
/// to another actor, or an unstructured `Task {}` (with Swift 6.3 it does not
/// inherit a task executor preference; `async let` and task-group children do),
/// runs on its own executor: a sleep it registers still fires at its deadline in
/// order and never early, and the task is resumed then (one that starts while an
/// advance passes its deadline ends in that advance), but the advance cannot
/// wait for it to run. swift-async-algorithms' `debounce` is such code: it
/// consumes its upstream in an unstructured `Task`. A test of it can rely on
/// deadlines and order, not on the task having run when the advance returns: it
/// awaits the effect it expects (the next element) instead. Sleeps registered
/// by such tasks are counted in ``sleepsOffExecutor``.
extension VirtualClock: Clock {
    /// An instant of virtual time: a ``PrecisionClock/Instant`` (nanoseconds of
    /// the virtual monotonic clock), so deadlines pass between the two freely.
    public typealias Instant = PrecisionClock.Instant
    /// The standard library's `Duration`, the unit of the clock's arithmetic.
    public typealias Duration = Swift.Duration

    /// The virtual monotonic reading.
    public var now: Instant { now(.monotonic) }

    /// One nanosecond, the resolution of every reading.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends the task until virtual time reaches `deadline` (monotonic).
    ///
    /// A deadline already reached returns at once (no hang at ``now``). Virtual
    /// sleeps wake exactly at their deadline: `tolerance` does not delay the
    /// wake-up (a negative one is zero, as on ``PrecisionClock``). ``PrecisionClock/Instant/max`` is "never": the task sleeps until
    /// it is cancelled, and ``run()`` does not wait for it. Cancellation ends
    /// the sleep at once: the task throws `CancellationError` when it next runs,
    /// which for a task on ``executor`` is at the next advance (the executor
    /// runs its jobs only during advances).
    nonisolated(nonsending)
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        if !isRunningJobsOnCallingThread {
            offExecutorSleeps.add(1, ordering: .relaxed)
        }
        try await sleepEngine.sleep(until: deadline.nanoseconds, source: .monotonic, leeway: .zero,
                                     isolation: #isolation)
    }

    /// Sleeps registered by tasks that were not running inside this clock's
    /// advance (not on ``executor`` nor on a virtual scheduler of this clock):
    /// tasks whose resumption an advance cannot wait for. Nonzero in a test
    /// that expects determinism means some code left the executor.
    public var sleepsOffExecutor: Int { offExecutorSleeps.load(ordering: .relaxed) }

    /// Whether the calling thread runs this clock's jobs now.
    var isRunningJobsOnCallingThread: Bool {
        let tid = cmc_thread_id()
        if executor.drainingThread.load(ordering: .acquiring) == tid { return true }
        return drivenEngines.contains { $0.drainingThread.load(ordering: .acquiring) == tid }
    }

    /// Lets the tasks on ``executor`` run until they suspend, then moves time
    /// forward by `duration`, firing what falls due and running the tasks each
    /// fire wakes, at that fire's instant. Returns once those tasks have run to
    /// their next suspension. A negative duration only runs the runnable tasks.
    public func advance(by duration: Duration) async {
        let ns = duration.saturatingNanoseconds
        advance(toMonotonic: nanoseconds(.monotonic).saturatingAdd(Swift.max(0, ns)))
    }

    /// Like ``advance(by:)-6mxwk``, up to the monotonic reading `instant` (one already
    /// past only runs the runnable tasks).
    public func advance(to instant: Instant) async {
        advance(toMonotonic: instant.nanoseconds)
    }

    /// Advances until no sleep of this clock is left: each step moves to the
    /// next sleeper's deadline (firing the timers of this clock's schedulers due
    /// on the way) and runs the tasks it woke. Sleeps "never" due (`max`) do not
    /// count. Returns at once when nothing sleeps; tasks that never stop
    /// sleeping (a loop) keep it going, as they would keep real time going.
    public func run() async {
        runJobs()
        while let wake = sleepEngine.nextWake() {
            advance(toMonotonic: wake)
        }
    }
}
