import CMonoClock
import Synchronization

/// A ``VirtualClock``'s task executor, ``VirtualClock/executor``: tasks that
/// prefer it run only when the clock advances, on the thread that advances it,
/// one job at a time in the order they became runnable.
///
/// Start the code under test on it, with `Task(executorPreference: clock.executor)`
/// or inside `withTaskExecutorPreference(clock.executor)` in a child task, and
/// drive it from the test with `await clock.advance(by:)` or `await clock.run()`.
/// Nothing runs between two advances, so each interleaving is the same every
/// run. The test's own task must not prefer this executor: it would wait for an
/// advance that only it could make.
///
/// A task on it that is cancelled (or otherwise made runnable) after the last
/// advance waits in the queue: end a test with one more advance (`.zero` is
/// enough) so such tasks run to their end. Left queued, a task that holds the
/// clock keeps the clock, its executor and itself alive: a leak.
public final class VirtualTaskExecutor: TaskExecutor, Sendable {
    private let jobs = Locked<[UnownedJob]>([])
    /// The thread running this executor's jobs now (0: none).
    let drainingThread = Atomic<Int32>(0)

    init() {}

    /// Queues `job` until the clock next advances.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// Jobs waiting for the next advance.
    var queuedJobs: Int { jobs.withLock { $0.count } }

    /// Runs the jobs queued now, in order, on the calling thread (those they
    /// enqueue wait for the next call). Adds how many ran to `count`; returns
    /// whether any did.
    func runQueuedJobs(count: inout Int) -> Bool {
        let batch = jobs.withLock { queued -> [UnownedJob] in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        guard !batch.isEmpty else { return false }
        let previous = drainingThread.exchange(cmc_thread_id(), ordering: .acquiringAndReleasing)
        let me = asUnownedTaskExecutor()
        for job in batch {
            job.runSynchronously(on: me)
        }
        drainingThread.store(previous, ordering: .releasing)
        count += batch.count
        return true
    }
}
