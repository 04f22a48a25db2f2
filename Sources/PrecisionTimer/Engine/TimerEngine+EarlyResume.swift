import CMonoClock

// The early resumption of sleeps on the engine's own thread, in one place.
//
// A task that sleeps on this engine and resumes on its thread (an actor whose
// executor is the scheduler, or a task that prefers it) registers a one-shot
// whose handler only queues the job that resumes it
// (`TimerNode.Handler.resumesTaskHere`, made in TimerEngine+Sleep.swift). While
// the task waits it prefers a sleep executor of this engine (below), so the
// library's part of its resumption is a job of that executor. When the thread
// spins toward such a sleep's deadline, `prepareFire` (TimerEngine+Thread.swift)
// takes the sleep's tick out of the prepared batch (`takeResumedEarly`), calls
// its handler and runs the jobs that end the sleep (`runSleepJobsEarly`) at the
// spin's start; only the switch back to the caller's own code waits for the
// deadline. The caller's code never runs early: those jobs end where the task
// leaves the sleep executor, which queues the job that runs its code after the
// spin.
extension TimerEngine {
    /// The most ticks a prepared batch may hold for the spin to look for sleeps
    /// in it: a fire of thousands of same-instant timers is not a sleeping
    /// task's, and skips the scan.
    static let earlyResumeScanLimit = 64

    /// Takes out of `batch` (a fire prepared ahead of a spin) the ticks of
    /// sleeps whose task resumes on this thread.
    func takeResumedEarly(from batch: inout [Tick]) -> [Tick] {
        guard batch.count <= Self.earlyResumeScanLimit else { return [] }
        let resumesTaskHere = { (tick: Tick) in tick.node.handler?.resumesTaskHere == true }
        let taken = batch.filter(resumesTaskHere)
        if !taken.isEmpty { batch.removeAll(where: resumesTaskHere) }
        return taken
    }

    /// The task executors a sleep on this engine's thread prefers while it
    /// waits: one for an actor's, one for a task's that prefers the scheduler.
    var sleepExecutors: SleepExecutors {
        sleepExecutorsSlot.withLock { slot in
            if let made = slot { return made }
            let made = SleepExecutors(actor: SleepExecutor(engine: self, of: .actor),
                                      task: SleepExecutor(engine: self, of: .task))
            slot = made
            return made
        }
    }

    /// Runs now, ahead of the other queued jobs, those that end a sleep
    /// (`.sleepEnd`): what a spin does after resuming such a sleep early.
    ///
    /// They run library code only: the end of the sleep, up to where the task
    /// leaves the sleep executor's preference and switches back to its actor or
    /// its preferred executor (the scheduler), which queues the job that runs
    /// the caller's own code (after the spin). A sleep's end takes more than one
    /// such job, so it runs them until none is left (a few rounds at most).
    /// Should a runtime ever not switch there, the sleep spins to its deadline
    /// before returning (see `sleep(until:source:leeway:isolation:)`): the
    /// caller's code never runs early either way. Jobs are not reordered
    /// otherwise; no other job runs meanwhile, so isolation holds.
    func runSleepJobsEarly() {
        var taken: [Job] = []
        for _ in 0..<Self.earlySleepJobRounds {
            state.withLock { s in
                taken = s.jobs.filter(\.endsASleep)
                if !taken.isEmpty { s.jobs.removeAll(where: \.endsASleep) }
            }
            guard !taken.isEmpty else { return }
            runJobs(taken, owner: nil)
        }
    }

    /// How many times ``runSleepJobsEarly()`` looks for more jobs.
    static let earlySleepJobRounds = 4

    /// Records the lateness of the sleeps the last spin resumed early (counted
    /// as fires when resumed), which ended at `spinEndedAt` (CLOCK_MONOTONIC):
    /// from each sleep's deadline to there, where its task's own code is free
    /// to run (its job runs next). A sleep resumed before a reset of the
    /// statistics is left out, as its fire was.
    func recordEarlyResumesLocked(_ s: inout EngineState, spinEndedAt: Int64) {
        guard !s.earlyResumedFires.isEmpty else { return }
        for fire in s.earlyResumedFires where fire.resets == s.statistics.resets {
            s.statistics.record(latenessNanoseconds: Swift.max(0, spinEndedAt &- fire.deadline),
                                on: PrecisionClock.Source.monotonic.rawValue)
        }
        s.earlyResumedFires.removeAll(keepingCapacity: true)
    }
}

/// The task executors a sleep on this engine's thread prefers while it waits
/// (see `TimerEngine.sleep(until:source:leeway:isolation:)`).
struct SleepExecutors: Sendable {
    /// For an actor whose executor is the scheduler: a continuation resumes on
    /// the generic executor, which is then this thread rather than the global pool.
    let actor: SleepExecutor
    /// For a task that prefers the scheduler: its sleep's end is a job of its
    /// own, which a spin may run before the deadline (the caller's code then
    /// waits in the job that switches back to the scheduler).
    let task: SleepExecutor
}

/// One of ``SleepExecutors``: queues the jobs that end a sleep on the engine.
final class SleepExecutor: TaskExecutor {
    /// Whose sleeps it ends.
    enum Caller {
        case actor, task
    }

    unowned let engine: TimerEngine
    let caller: Caller

    init(engine: TimerEngine, of caller: Caller) {
        self.engine = engine
        self.caller = caller
    }

    func enqueue(_ job: consuming ExecutorJob) {
        engine.enqueue(.sleepEnd(UnownedJob(job), self), owner: nil)
    }
}

/// How long resuming sleeps early at a spin's start takes on this thread, kept
/// so that the next spin starts that much sooner (``WaitPlan/Inputs/spinStartWork``).
///
/// The work (calling the sleeps' handlers, running the jobs that end them)
/// happens between the wake-up and the spin, so it eats the spin margin, which
/// is learned from oversleep alone: a few microseconds typically, more now and
/// then, and a deadline whose wake-up overslept by most of the margin was then
/// passed before the spin began. While the spins resume sleeps, the margin
/// grows by the second longest of the last ``window`` such starts (a high
/// percentile without the single worst); a spin that resumes none adds nothing
/// to the next one.
struct EarlyResumeCost {
    /// Starts remembered.
    static let window = 128
    /// The most added to a margin, whatever was measured.
    static let cap: Int64 = 200_000

    private var samples = [Int64](repeating: 0, count: Self.window)
    private var next = 0
    private var lastResumed = false
    /// The second longest of `samples`.
    private var secondLongest: Int64 = 0

    /// What the next spin margin adds: the recent cost, while the last spin
    /// resumed sleeps early; zero otherwise.
    var work: Int64 { lastResumed ? Swift.min(secondLongest, Self.cap) : 0 }

    /// Records a spin's start, which resumed sleeps early or not, and how long
    /// the work before the spin took (meaningful only when it resumed some).
    mutating func spinStarted(resumedEarly: Bool, took nanoseconds: Int64) {
        lastResumed = resumedEarly
        guard resumedEarly else { return }
        samples[next] = Swift.max(0, nanoseconds)
        next = next == Self.window - 1 ? 0 : next + 1
        var longest: Int64 = 0
        var second: Int64 = 0
        for sample in samples {
            if sample > longest {
                second = longest
                longest = sample
            } else if sample > second {
                second = sample
            }
        }
        secondLongest = second
    }
}
