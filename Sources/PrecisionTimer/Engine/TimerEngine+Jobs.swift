import CMonoClock

/// Swift concurrency jobs on the engine's thread: what makes a
/// ``TimerScheduler`` a `TaskExecutor` and an actor's `SerialExecutor`.
///
/// Jobs wait in one FIFO queue under the engine's lock. The engine thread runs
/// them between timer fires: after the ticks of a wake-up are delivered, it runs
/// the jobs queued by then, in order, then looks at its timers again before the
/// next batch. A job that resumes a task whose sleep just fired is therefore
/// run right after that fire, on the same thread, with no hop. Under virtual
/// time the clock runs them as it advances.
extension TimerEngine {
    /// Queues `job` of `scheduler`. The queue holds `scheduler` strongly while
    /// it has jobs, so a scheduler released with jobs queued lives until they
    /// have run (then its thread ends as usual): none is lost, none leaks.
    /// Wakes the engine thread when it is asleep (or spinning: it runs the job
    /// once the spin's fire is delivered).
    func enqueue(_ job: UnownedJob, of scheduler: TimerScheduler) {
        let ring = state.withLock { s -> Bool in
            s.jobs.append(job)
            if s.jobOwner == nil { s.jobOwner = scheduler }
            return !s.awake
        }
        if ring { doorbell.bumpAndWake() }
    }

    /// Takes the queued jobs (into `batch`, whose buffer is swapped with the
    /// queue's) and the scheduler they belong to. Nil when none is queued.
    func takeJobsLocked(_ s: inout EngineState, into batch: inout [UnownedJob]) -> TimerScheduler? {
        guard !s.jobs.isEmpty else { return nil }
        swap(&s.jobs, &batch)
        defer { s.jobOwner = nil }
        return s.jobOwner
    }

    /// Runs `batch` in order on the calling thread, isolated to `scheduler` (for
    /// an actor on it) and with it as the task executor (for a task that
    /// prefers it). Jobs these enqueue wait for the next batch.
    func run(_ batch: [UnownedJob], of scheduler: TimerScheduler) {
        let serial = scheduler.asUnownedSerialExecutor()
        let taskExecutor = scheduler.asUnownedTaskExecutor()
        for job in batch {
            job.runSynchronously(isolatedTo: serial, taskExecutor: taskExecutor)
        }
    }

    /// Runs the jobs queued now, on the calling thread: how a ``VirtualClock``
    /// drives a virtual scheduler's jobs. Returns whether any ran.
    func runQueuedJobs() -> Bool {
        var batch: [UnownedJob] = []
        guard let owner = state.withLock({ s in takeJobsLocked(&s, into: &batch) }) else { return false }
        let previous = drainingThread.exchange(cmc_thread_id(), ordering: .acquiringAndReleasing)
        run(batch, of: owner)
        drainingThread.store(previous, ordering: .releasing)
        return true
    }

    /// The engine whose scheduler thread the caller runs on (nil elsewhere,
    /// and always under virtual time).
    static var current: TimerEngine? {
        guard let raw = cmc_current_scheduler() else { return nil }
        return Unmanaged<TimerEngine>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Whether the calling thread is the one that runs this engine's jobs now:
    /// its scheduler thread, or under virtual time the thread advancing the clock.
    var isRunningJobsOnCallingThread: Bool {
        let tid = cmc_thread_id()
        return threadID.load(ordering: .acquiring) == tid || drainingThread.load(ordering: .acquiring) == tid
    }
}
