/// A ``TimerScheduler`` is a Swift executor: tasks and actors run on its thread,
/// between its timer fires.
///
/// - As a `TaskExecutor` (SE-0417): `Task(executorPreference: scheduler) { … }`
///   and `withTaskExecutorPreference(scheduler) { … }` run the task's
///   nonisolated code on the scheduler's thread. Its sleeps,
///   ``PrecisionClock/sleep(until:tolerance:)`` or ``sleep(until:on:tolerance:)``,
///   are timers of this scheduler, and the task resumes on this thread right
///   after the fire: the scheduler's precision, with no hop to another thread.
/// - As a `SerialExecutor` (SE-0392): an actor runs on it with
///   `nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }`,
///   and keeps the scheduler in a stored property (the executor reference is
///   unowned). Its methods, and the sleeps they await, get the same precision.
///
/// Jobs run on the scheduler's thread in the order they were enqueued, one at a
/// time, after the timer fires due when they were queued and before the thread
/// waits again. They cost what inline handlers cost: while a job runs, this
/// scheduler's timers wait, so keep jobs short (suspend, don't block) and give a
/// control loop a scheduler of its own. A job enqueued while the thread spins
/// for a zero-leeway deadline runs right after that fire.
///
/// A sleep that resumes on this thread (one made by a task that prefers the
/// scheduler, or by an actor on it) is resumed when the spin before its
/// deadline starts: the Swift runtime's part of the resumption and the end of
/// the sleep, up to its switch back to the task's executor or the actor, run
/// then, ahead of other queued jobs, and the caller's own code runs right after
/// the deadline, never before: the task's wake-up costs what a timer's handler
/// call costs, not a resumption through the runtime after the deadline (the bench
/// report's `TimerScheduler.executor` and `TimerScheduler.actor` rows measure it).
///
/// Timer handlers run on the same thread, never at the same time as a job, so a
/// handler may enter an actor on this scheduler with `assumeIsolated`.
///
/// Releasing the scheduler while jobs are queued loses none: the queue holds the
/// scheduler until they have run, then its thread ends as usual (once no timer is
/// live). A virtual scheduler (``init(clock:logger:)``) runs its jobs on the thread that
/// advances its ``VirtualClock``, as part of each advance.
extension TimerScheduler: TaskExecutor, SerialExecutor {
    /// Queues `job` of a task that prefers this scheduler, to run on its thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        engine.enqueue(UnownedJob(job), of: self)
    }

    /// The serial executor for an actor on this scheduler. Its jobs go to the
    /// same queue and thread; it is a separate identity from the task executor
    /// so that a task preferring the scheduler runs its nonisolated code here
    /// without a switch of isolation (which would cost a trip through the queue
    /// at every call into nonisolated async code).
    ///
    /// The actor refers to the executor unowned: keep the scheduler in a stored
    /// property of the actor. An actor whose scheduler was released stops the
    /// program at its next call, with a `PrecisionTimer:` message saying so
    /// (never a hang, never freed memory): a scheduler that has served as an
    /// actor's executor keeps a few hundred bytes of bookkeeping for the life of
    /// the process to make that check.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        engine.keepAliveAsActorExecutor()
        return UnownedSerialExecutor(ordinary: engine)
    }

    /// Stops the program unless the caller runs on this scheduler's thread (or,
    /// for a virtual scheduler, inside its clock's advance): what
    /// `Actor.assertIsolated` and `assumeIsolated` check for an actor on it.
    public func checkIsolated() {
        engine.checkIsolated()
    }

    /// Whether the caller runs on this scheduler's thread (see ``checkIsolated()``).
    public func isIsolatingCurrentContext() -> Bool? {
        engine.isIsolatingCurrentContext()
    }
}
