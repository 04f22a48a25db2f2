import CMonoClock
import Logging
import Synchronization

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
    /// A queued job, and how it runs.
    enum Job {
        /// A job of a task that prefers the scheduler: it runs with the
        /// scheduler as its task executor, so its nonisolated code stays here.
        case task(UnownedJob)
        /// An actor's job (the engine is the serial executor behind
        /// ``TimerScheduler/asUnownedSerialExecutor()``): it runs isolated to
        /// the engine.
        case isolated(UnownedJob)
        /// The end of a sleep on this thread (library code only), queued by
        /// the sleep executor the sleeping task prefers while it waits (one of
        /// ``sleepExecutors``): it runs on that executor, isolated to the engine
        /// for an actor's sleep.
        case sleepEnd(UnownedJob, SleepExecutor)

        /// Whether the job ends a sleep.
        var endsASleep: Bool {
            if case .sleepEnd = self { true } else { false }
        }
    }

    /// Queues `job` of a task that prefers `owner` (a scheduler). The queue holds
    /// `owner` strongly while it has such jobs, so a scheduler released with
    /// jobs queued lives until they have run (then its thread ends as usual):
    /// none is lost, none leaks.
    func enqueue(_ job: UnownedJob, of owner: any TaskExecutor) {
        enqueue(.task(job), owner: owner)
    }

    /// Queues `job`, waking the engine thread when it is asleep (or spinning:
    /// it runs the job once the spin's fire is delivered).
    func enqueue(_ job: Job, owner: (any TaskExecutor)?) {
        let ring = state.withLock { s -> Bool? in
            // An actor's job after its scheduler was released: nothing would
            // ever run it (the thread ends once the scheduler is idle).
            if case .isolated = job, s.shutdownRequested { return nil }
            s.jobs.append(job)
            if s.jobOwner == nil, let owner { s.jobOwner = owner }
            // On the engine thread itself (a timer handler resuming a task, a
            // job enqueuing another) the thread looks at the queue before it
            // waits again: no doorbell, no system call.
            return !s.awake && !isCurrentThreadsEngine
        }
        guard let ring else {
            // fatalError, not preconditionFailure: the message stays in optimised builds.
            fatalError("PrecisionTimer: an actor's job was sent to the TimerScheduler '\(options.name)' "
                                + "after that scheduler was released; an actor's unownedExecutor does not keep its "
                                + "scheduler alive: keep the scheduler in a stored property of the actor")
        }
        if ring { doorbell.ring() }
    }

    /// Engines that have served as an actor's serial executor, kept for the
    /// life of the process. An actor refers to its executor unowned, so an
    /// actor whose scheduler nothing keeps alive would otherwise send its next
    /// job to freed memory; kept, the engine stops the program with a message
    /// naming the mistake instead. What stays is the engine's bookkeeping (a few
    /// hundred bytes); its thread ends as usual.
    private static let actorExecutors = Mutex<[TimerEngine]>([])

    /// Records that an actor may use this engine as its executor (see
    /// ``actorExecutors``); cheap after the first call, which matters because
    /// the runtime reads an actor's executor at every switch to it.
    func keepAliveAsActorExecutor() {
        guard !servesActors.load(ordering: .relaxed),
              !servesActors.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.actorExecutors.withLock { $0.append(self) }
    }

    /// Takes the queued jobs (into `batch`, whose buffer is swapped with the
    /// queue's) and the scheduler their tasks prefer (nil when only actor jobs
    /// are queued). Returns whether any job was queued.
    func takeJobsLocked(_ s: inout EngineState, into batch: inout [Job], owner: inout (any TaskExecutor)?) -> Bool {
        guard !s.jobs.isEmpty else { return false }
        swap(&s.jobs, &batch)
        owner = s.jobOwner
        s.jobOwner = nil
        return true
    }

    /// Runs `batch` in order on the calling thread. Jobs these enqueue wait for
    /// the next batch.
    func runJobs(_ batch: [Job], owner: (any TaskExecutor)?) {
        jobsRun.add(UInt64(batch.count), ordering: .relaxed)
        let serial = asUnownedSerialExecutor()
        let taskExecutor = owner?.asUnownedTaskExecutor()
        guard options.recordsStatistics else {
            for item in batch { run(item, serial: serial, taskExecutor: taskExecutor) }
            return
        }
        // Each job's run time: a clock read after it, kept on the stack and
        // recorded under one lock round trip for the batch.
        withUnsafeTemporaryAllocation(of: Int64.self, capacity: batch.count) { runTimes in
            var last = now(.monotonic)
            for (i, item) in batch.enumerated() {
                run(item, serial: serial, taskExecutor: taskExecutor)
                let end = now(.monotonic)
                runTimes[i] = end &- last
                last = end
            }
            state.withLock { s in
                for ranFor in runTimes { s.statistics.jobTime.record(nanoseconds: ranFor) }
            }
            for ranFor in runTimes where ranFor > options.slowCallThreshold { logSlowJob(ranFor: ranFor) }
        }
    }

    /// Runs one job on the calling thread.
    @inline(__always)
    func run(_ item: Job, serial: UnownedSerialExecutor, taskExecutor: UnownedTaskExecutor?) {
        switch item {
        case .task(let job):
            // A task job always comes with its owner (see `enqueue`).
            job.runSynchronously(on: taskExecutor!)
        case .isolated(let job):
            job.runSynchronously(on: serial)
        case .sleepEnd(let job, let executor):
            switch executor.caller {
            case .actor: job.runSynchronously(isolatedTo: serial, taskExecutor: executor.asUnownedTaskExecutor())
            case .task: job.runSynchronously(on: executor.asUnownedTaskExecutor())
            }
        }
    }

    /// Logs (at `debug`) a job that held the thread past the slow-call
    /// threshold: every timer due meanwhile waited for it.
    func logSlowJob(ranFor: Int64) {
        options.logger.debug("job ran past the slow-call threshold on a scheduler thread", metadata: [
            "scheduler": "\(options.name)",
            "ran_ns": "\(ranFor)",
            "threshold_ns": "\(options.slowCallThreshold)",
        ])
    }

    /// Runs the jobs queued now, on the calling thread: how a ``VirtualClock``
    /// drives a virtual scheduler's jobs. Returns whether any ran.
    func runQueuedJobs() -> Bool {
        var batch: [Job] = []
        var owner: (any TaskExecutor)?
        guard state.withLock({ s in takeJobsLocked(&s, into: &batch, owner: &owner) }) else { return false }
        let previous = drainingThread.exchange(cmc_thread_id(), ordering: .acquiringAndReleasing)
        runJobs(batch, owner: owner)
        drainingThread.store(previous, ordering: .releasing)
        return true
    }

    /// The engine whose scheduler thread the caller runs on (nil elsewhere,
    /// and always under virtual time).
    static var current: TimerEngine? {
        guard let raw = cmc_current_scheduler() else { return nil }
        return Unmanaged<TimerEngine>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Whether the caller runs on this engine's own scheduler thread (a thread-local
    /// read, no system call).
    var isCurrentThreadsEngine: Bool {
        cmc_current_scheduler() == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Whether the calling thread is the one that runs this engine's jobs and
    /// handlers now: its scheduler thread, or under virtual time the thread
    /// advancing the clock while it runs the engine's jobs or delivers its ticks.
    var isRunningJobsOnCallingThread: Bool {
        let tid = cmc_thread_id()
        return threadID.load(ordering: .acquiring) == tid || drainingThread.load(ordering: .acquiring) == tid
            || deliveringThread.load(ordering: .acquiring) == tid
    }
}

/// The engine is the serial executor of actors on its scheduler: their jobs
/// run isolated to it, on its thread (see ``TimerScheduler/asUnownedSerialExecutor()``).
extension TimerEngine: SerialExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.isolated(UnownedJob(job)), owner: nil)
    }

    func checkIsolated() {
        precondition(isRunningJobsOnCallingThread,
                     "PrecisionTimer: expected to run on the TimerScheduler '\(options.name)', but this is another thread")
    }

    func isIsolatingCurrentContext() -> Bool? {
        isRunningJobsOnCallingThread
    }
}
