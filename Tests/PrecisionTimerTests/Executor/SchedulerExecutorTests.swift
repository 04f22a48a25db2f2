import AsyncAlgorithms
import CMonoClock
@testable import PrecisionTimer
import Synchronization
import XCTest

/// `TimerScheduler` as a `TaskExecutor` and `SerialExecutor`: where jobs run,
/// in which order, what isolation an actor on it gets, and what its sleeps,
/// cancellation and release do. Real time: lateness bounds are generous; what
/// must hold exactly (thread, order, never early, counts) is asserted exactly.
final class SchedulerExecutorTests: XCTestCase {
    /// An append-only log shared with tasks.
    final class Log<Element: Sendable>: Sendable {
        private let items = Mutex<[Element]>([])
        func append(_ item: Element) { items.withLock { $0.append(item) } }
        var all: [Element] { items.withLock { $0 } }
    }

    private func makeScheduler(_ name: String = "exec-test", priority: TimerScheduler.Options.Priority = .normal,
                               cpu: Int? = nil) throws -> TimerScheduler {
        try TimerScheduler(options: .init(priority: priority, cpu: cpu, name: name))
    }

    private func threadOf(_ scheduler: TimerScheduler) -> Int32 {
        scheduler.engine.threadID.load(ordering: .acquiring)
    }

    func testJobsRunOnTheSchedulersThreadInTheOrderTheyWereEnqueued() async throws {
        let scheduler = try makeScheduler()
        let order = Log<Int>()
        let threads = Log<Int32>()
        // Hold the thread in a handler so every task's first job is queued
        // before any runs: the order is then the queue's order alone.
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        scheduler.engine.startTestTimer { held.signal(); gate.wait() }
        held.wait()
        var tasks: [Task<Void, Never>] = []
        for i in 0..<200 {
            tasks.append(Task(executorPreference: scheduler) {
                order.append(i)
                threads.append(cmc_thread_id())
            })
        }
        gate.signal()
        for task in tasks { await task.value }
        XCTAssertEqual(order.all, Array(0..<200))
        XCTAssertEqual(Set(threads.all), [threadOf(scheduler)])
    }

    /// Timers that keep the thread busy (a handler that overruns its period,
    /// so that every collection finds a tick due) must not starve the jobs:
    /// those queued during a batch run after it, before the next collection.
    func testJobsRunWhileTheTimersKeepTheThreadBusy() async throws {
        let scheduler = try makeScheduler()
        for policy in [MissedTickPolicy.skip, .burst] {
            let timer = scheduler.repeating(every: .milliseconds(1), policy: policy) { _ in
                let end = cmc_now_ns(cmc_clock_monotonic) + 1_500_000
                while cmc_now_ns(cmc_clock_monotonic) < end { cmc_cpu_relax() }
            }
            try await Task.sleep(for: .milliseconds(20))  // the thread is behind now
            let threadID = threadOf(scheduler)
            let ran = await withWatchdog(.seconds(10)) {
                let task = Task(executorPreference: scheduler) { cmc_thread_id() }
                return await withTaskCancellationHandler { await task.value } onCancel: { timer.cancel() }
            }
            XCTAssertEqual(ran, threadID, "\(policy)")
            timer.cancel()
        }
    }

    func testATaskThatPrefersTheSchedulerSleepsOnItAndResumesOnItsThreadNeverEarly() async throws {
        let scheduler = try makeScheduler()
        let before = scheduler.statistics.fires
        let jobsBefore = scheduler.statistics.jobs
        let result = await Task(executorPreference: scheduler) { () -> (threads: Set<Int32>, early: Int) in
            var threads = Set<Int32>()
            var early = 0
            let clock = PrecisionClock.monotonic
            for _ in 0..<50 {
                // Always ahead of now, so every sleep is a timer (one already
                // past would return at once, without one).
                let deadline = clock.now + .milliseconds(5)
                try? await clock.sleep(until: deadline)     // PrecisionClock.sleep: this scheduler, not .shared
                if clock.now < deadline { early += 1 }
                threads.insert(cmc_thread_id())
                try? await scheduler.sleep(until: clock.now + .milliseconds(2))  // ahead of now too
                threads.insert(cmc_thread_id())
            }
            return (threads, early)
        }.value
        XCTAssertEqual(result.threads, [threadOf(scheduler)])
        XCTAssertEqual(result.early, 0)
        // Both kinds of sleep were timers of this scheduler (100 fires), and each
        // ran as three jobs on its thread (the switch to the engine's sleep
        // executor, the sleep's end, the switch back that runs the task's code):
        // no hop through another executor (the task's start and end add a few).
        XCTAssertEqual(scheduler.statistics.fires - before, 100)
        XCTAssertLessThanOrEqual(scheduler.statistics.jobs - jobsBefore, 3 * 100 + 3)
        XCTAssertEqual(scheduler.engine.sleepsResumedElsewhere.load(ordering: .relaxed), 0)
    }

    func testASleepOnTheSchedulersThreadWhoseDeadlineIsPastReturnsWithoutAJobOrATimer() async throws {
        let scheduler = try makeScheduler()
        let loop = ControlLoop(scheduler: scheduler)
        // In a task that prefers the scheduler, and in an actor on it: 100 sleeps
        // to a deadline already past, read on the thread before and after (one
        // job: no suspension in between), switch no executor and start no timer.
        let inTask = try await Task(executorPreference: scheduler) { () -> (jobs: Int, fires: Int) in
            let before = scheduler.statistics
            for _ in 0..<100 {
                try await PrecisionClock.monotonic.sleep(until: PrecisionClock.monotonic.now - .milliseconds(1))
            }
            let after = scheduler.statistics
            return (after.jobs - before.jobs, after.fires - before.fires)
        }.value
        XCTAssertEqual(inTask.jobs, 0)
        XCTAssertEqual(inTask.fires, 0)
        let inActor = try await loop.sleepsPast(100)
        XCTAssertEqual(inActor.jobs, 0)
        XCTAssertEqual(inActor.fires, 0)
    }

    func testWithTaskExecutorPreferenceAndAsyncTimerSequenceRunOnTheScheduler() async throws {
        let scheduler = try makeScheduler()
        let threads = Log<Int32>()
        let before = scheduler.statistics.fires
        await withTaskExecutorPreference(scheduler) {
            threads.append(cmc_thread_id())
            var count = 0
            // Clock-generic code that sleeps on a PrecisionClock.
            for await _ in AsyncTimerSequence(interval: .milliseconds(1), clock: PrecisionClock.monotonic) {
                threads.append(cmc_thread_id())
                count += 1
                if count == 10 { break }
            }
            // A child task inherits the preference.
            async let child: Int32 = cmc_thread_id()
            threads.append(await child)
        }
        XCTAssertEqual(Set(threads.all), [threadOf(scheduler)])
        // The sequence's sleeps are this scheduler's timers. Not one per tick: a
        // loop that falls behind its 1 ms grid on a loaded machine sleeps to a
        // deadline already past, which returns at once with no timer.
        XCTAssertGreaterThan(scheduler.statistics.fires - before, 0)
    }

    actor ControlLoop {
        let scheduler: TimerScheduler
        var ticks = 0
        init(scheduler: TimerScheduler) { self.scheduler = scheduler }
        nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

        func run(count: Int, every interval: Duration) async throws -> (threads: Set<Int32>, early: Int) {
            var threads = Set<Int32>()
            var early = 0
            for _ in 0..<count {
                // Ahead of now each time (not a grid), so every sleep is a timer:
                // a loop that fell behind would otherwise return at once.
                let deadline = PrecisionClock.monotonic.now + interval
                try await PrecisionClock.monotonic.sleep(until: deadline)
                if PrecisionClock.monotonic.now < deadline { early += 1 }
                assertIsolated()
                scheduler.checkIsolated()
                threads.insert(cmc_thread_id())
                ticks += 1
            }
            return (threads, early)
        }

        func bump() { ticks += 1 }

        /// `count` sleeps to a deadline already past: the jobs and fires they took.
        func sleepsPast(_ count: Int) async throws -> (jobs: Int, fires: Int) {
            let before = scheduler.statistics
            for _ in 0..<count {
                try await PrecisionClock.monotonic.sleep(until: PrecisionClock.monotonic.now - .milliseconds(1))
            }
            let after = scheduler.statistics
            return (after.jobs - before.jobs, after.fires - before.fires)
        }
    }

    func testAnActorOnTheSchedulerIsIsolatedToItsThreadAndSleepsOnIt() async throws {
        let scheduler = try makeScheduler()
        let loop = ControlLoop(scheduler: scheduler)
        let before = scheduler.statistics.fires
        let jobsBefore = scheduler.statistics.jobs
        let result = try await loop.run(count: 30, every: .milliseconds(5))
        XCTAssertEqual(result.threads, [threadOf(scheduler)])
        XCTAssertEqual(result.early, 0)
        XCTAssertEqual(scheduler.statistics.fires - before, 30)
        // An actor's sleep resumes on this thread too (it prefers the engine
        // while it waits), not through the global pool, and every resumption
        // was a job of this scheduler.
        XCTAssertEqual(scheduler.engine.sleepsResumedElsewhere.load(ordering: .relaxed), 0)
        XCTAssertGreaterThanOrEqual(scheduler.statistics.jobs - jobsBefore, 30)
        // A few jobs a sleep, all on this thread: the switch to the engine's
        // sleep executor, the sleep's end, the switch back to the actor (four in
        // a release build, six in a debug one, where the runtime switches more
        // often); a hop per job would be far more.
        XCTAssertLessThanOrEqual(scheduler.statistics.jobs - jobsBefore, 8 * 30 + 3)
        let ticks = await loop.ticks
        XCTAssertEqual(ticks, 30)
        // Off its thread the scheduler says it is not the current context.
        XCTAssertEqual(scheduler.isIsolatingCurrentContext(), false)
    }

    func testATimerHandlerMayEnterAnActorOnItsSchedulerAndEnqueueJobs() async throws {
        let scheduler = try makeScheduler()
        let loop = ControlLoop(scheduler: scheduler)
        let events = Log<String>()
        let done = DispatchSemaphore(value: 0)
        let schedulerThread = threadOf(scheduler)
        scheduler.engine.startTestTimer(after: .milliseconds(1)) {
            // Handlers and jobs share the thread and never overlap.
            loop.assumeIsolated { $0.bump() }
            Task(executorPreference: scheduler) {
                events.append("job on scheduler: \(cmc_thread_id() == schedulerThread)")
                done.signal()
            }
            events.append("handler returns")
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(events.all, ["handler returns", "job on scheduler: true"])
        let ticks = await loop.ticks
        XCTAssertEqual(ticks, 1)
    }

    /// Under virtual time a handler runs inside the clock's advance, isolated
    /// to its scheduler as on a real one's thread: it may enter an actor on
    /// it, from a synchronous advance and an async one, nested or not; off the
    /// advance, and in a `.queue` delivery, it is not isolated.
    func testATimerHandlerOnAVirtualSchedulerMayEnterAnActorOnIt() async throws {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        let loop = ControlLoop(scheduler: scheduler)
        let seen = Log<String>()
        @Sendable func enter(_ label: String) {
            seen.append("\(label): \(scheduler.isIsolatingCurrentContext() == true)")
            let ticks = loop.assumeIsolated { loop in
                loop.bump()
                return loop.ticks
            }
            seen.append("\(label) ticks \(ticks)")
        }
        func advance() { clock.advance(by: .milliseconds(1)) }  // the synchronous advance
        let first = scheduler.schedule(after: .milliseconds(1)) { _ in enter("sync") }
        advance()
        let second = scheduler.schedule(after: .milliseconds(1)) { _ in enter("async") }
        await clock.advance(by: .milliseconds(1))
        // A handler that advances the clock: the handler it fires is isolated,
        // and so is the rest of the outer one.
        let inner = Log<OneShotTimer>()
        let outer = scheduler.schedule(after: .milliseconds(1)) { _ in
            inner.append(scheduler.schedule(after: .milliseconds(1)) { _ in enter("nested") })
            clock.advance(by: .milliseconds(1))
            enter("outer")
        }
        advance()
        let queue = DispatchQueue(label: "t-virtual-queue")
        let queued = scheduler.schedule(after: .milliseconds(1), delivery: .queue(queue)) { _ in
            seen.append("queue: \(scheduler.isIsolatingCurrentContext() == true)")
        }
        advance()
        queue.sync {}
        XCTAssertEqual(seen.all, ["sync: true", "sync ticks 1", "async: true", "async ticks 2",
                                  "nested: true", "nested ticks 3", "outer: true", "outer ticks 4", "queue: false"])
        XCTAssertEqual(scheduler.isIsolatingCurrentContext(), false)
        withExtendedLifetime((first, second, outer, inner.all, queued)) {}
    }

    func testCancellingASleepingTaskOnTheSchedulerEndsItPromptly() async throws {
        let scheduler = try makeScheduler()
        let started = DispatchSemaphore(value: 0)
        let task = Task(executorPreference: scheduler) { () -> (Error?, Int32) in
            started.signal()
            do {
                try await PrecisionClock.monotonic.sleep(until: .max)  // "never"
                return (nil, cmc_thread_id())
            } catch {
                return (error, cmc_thread_id())
            }
        }
        started.wait()
        // Wait until the sleep is registered (one live timer), then cancel.
        let t0 = PrecisionClock.monotonic.now
        while scheduler.statistics.liveTimers == 0 && PrecisionClock.monotonic.now - t0 < .seconds(10) {
            try await Task.sleep(for: .milliseconds(1))
        }
        let cancelledAt = PrecisionClock.monotonic.now
        task.cancel()
        let (error, thread) = await task.value
        XCTAssertTrue(error is CancellationError, "\(String(describing: error))")
        XCTAssertEqual(thread, threadOf(scheduler))
        XCTAssertLessThan(PrecisionClock.monotonic.now - cancelledAt, .seconds(2))
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testReleasingTheSchedulerWithJobsQueuedRunsThemAllThenEndsItsThread() async throws {
        var scheduler: TimerScheduler? = try makeScheduler("exec-release")
        weak let weakScheduler = scheduler
        let tid = threadOf(scheduler!)
        let ran = Log<Int>()
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        // Busy the thread so that the jobs queue up behind the handler.
        scheduler!.engine.startTestTimer { held.signal(); gate.wait() }
        held.wait()
        let count = 100
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<count {
            tasks.append(Task(executorPreference: scheduler!) { ran.append(1) })
        }
        XCTAssertEqual(scheduler!.engine.state.withLock { $0.jobs.count }, count)
        scheduler = nil  // our reference goes while 100 jobs are queued
        gate.signal()
        for task in tasks { await task.value }
        XCTAssertEqual(ran.all.count, count)
        tasks.removeAll()
        // Then the scheduler goes, and its thread ends.
        let t0 = PrecisionClock.monotonic.now
        while (weakScheduler != nil || threadExists(tid)) && PrecisionClock.monotonic.now - t0 < .seconds(10) {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertNil(weakScheduler)
        XCTAssertFalse(threadExists(tid), "the released scheduler's thread is still there")
    }

    func testARealtimePinnedSchedulerRunsTheTaskOnItsThread() async throws {
        let scheduler = try makeScheduler("exec-rt", priority: .realtime(10), cpu: ThreadControls.allowedCPUs.first)
        if case .refused(let errno) = scheduler.threadReport.realtime {
            throw XCTSkip("SCHED_FIFO refused here (\(errno)); the rest is covered by the other tests")
        }
        let result = await Task(executorPreference: scheduler) { () -> (Set<Int32>, Int) in
            var threads = Set<Int32>()
            var early = 0
            var deadline = PrecisionClock.monotonic.now
            for _ in 0..<20 {
                deadline = deadline + .milliseconds(1)
                try? await PrecisionClock.monotonic.sleep(until: deadline)
                if PrecisionClock.monotonic.now < deadline { early += 1 }
                threads.insert(cmc_thread_id())
            }
            return (threads, early)
        }.value
        XCTAssertEqual(result.0, [threadOf(scheduler)])
        XCTAssertEqual(result.1, 0)
    }

    /// A sleep whose task resumes on the scheduler's thread is resumed when the
    /// spin before its deadline starts (its job then waits in the queue): with a
    /// 3 ms spin, and a timer of another thread ringing the doorbell inside that
    /// spin, the task must still never run before its deadline.
    func testASleepResumedAtTheSpinsStartNeverRunsBeforeItsDeadline() async throws {
        let scheduler = try spinningScheduler(name: "exec-early", spinsLast: .milliseconds(3))
        let ring = DispatchSemaphore(value: 0)
        let others = Log<OneShotTimer>()
        let otherFired = Log<Bool>()
        let ringer = Thread {
            for _ in 0..<20 {
                ring.wait()
                usleep(2_500)  // into the sleep's 3 ms spin, which began 2 ms after the signal
                others.append(scheduler.schedule(after: .microseconds(1_000)) { _ in otherFired.append(true) })
            }
        }
        ringer.start()
        let result = await Task(executorPreference: scheduler) { () -> (early: Int, worst: Int64) in
            var early = 0
            var worst = Int64.max
            for _ in 0..<20 {
                let deadline = PrecisionClock.monotonic.now + .milliseconds(5)
                ring.signal()  // the test thread schedules a timer 1 ms before this deadline
                try? await PrecisionClock.monotonic.sleep(until: deadline)
                let margin = (PrecisionClock.monotonic.now - deadline).saturatingNanoseconds
                if margin < 0 { early += 1 }
                worst = min(worst, margin)
            }
            return (early, worst)
        }.value
        XCTAssertEqual(result.early, 0, "a resumed task ran \(-result.worst) ns before its deadline")
        XCTAssertGreaterThan(scheduler.statistics.fires, 19)
        // The other thread's timers did ring the doorbell during those spins.
        let t0 = PrecisionClock.monotonic.now
        while otherFired.all.count < 20 && PrecisionClock.monotonic.now - t0 < .seconds(10) {
            try await Task.sleep(for: .milliseconds(1))
        }
        XCTAssertEqual(otherFired.all.count, 20)
        _ = others
    }

    /// The same for an actor on the scheduler: its sleep's resumption runs
    /// during the spin, ahead of the deadline; its own code must not.
    func testAnActorsSleepResumedAtTheSpinsStartNeverRunsBeforeItsDeadline() async throws {
        let scheduler = try spinningScheduler(name: "exec-early-actor", spinsLast: .milliseconds(3))
        let loop = ControlLoop(scheduler: scheduler)
        for _ in 0..<3 {
            let result = try await loop.run(count: 10, every: .milliseconds(5))
            XCTAssertEqual(result.early, 0)
            XCTAssertEqual(result.threads, [threadOf(scheduler)])
        }
        XCTAssertEqual(scheduler.engine.sleepsResumedElsewhere.load(ordering: .relaxed), 0)
    }

    /// Sleeps resumed at the spin's start are fires with a lateness like any
    /// other: the statistics count as many lateness values as fires, in an
    /// actor on the scheduler and in a task that prefers it (each sleep's
    /// lateness runs from its deadline to the spin's end, where its code is
    /// free to run).
    func testSleepsResumedAtTheSpinsStartRecordTheirLateness() async throws {
        let scheduler = try spinningScheduler(name: "exec-early-stats", spinsLast: .milliseconds(3))
        let loop = ControlLoop(scheduler: scheduler)
        _ = try await loop.run(count: 30, every: .milliseconds(5))
        try await Task(executorPreference: scheduler) {
            for _ in 0..<30 { try await PrecisionClock.monotonic.sleep(until: PrecisionClock.monotonic.now + .milliseconds(5)) }
        }.value
        // The thread records their lateness once it has nothing due.
        let t0 = PrecisionClock.monotonic.now
        while scheduler.statistics.lateness.count < 60 && PrecisionClock.monotonic.now - t0 < .seconds(10) {
            try await Task.sleep(for: .milliseconds(1))
        }
        let figures = scheduler.statistics.clock(.monotonic)
        XCTAssertEqual(figures.fires, 60)
        XCTAssertEqual(figures.lateness.count, 60, "fires without a lateness")
        XCTAssertGreaterThanOrEqual(figures.lateness.min, .zero)
        XCTAssertGreaterThan(scheduler.statistics.spinTime, .zero, "the sleeps were not spun to")
    }

    /// A cancel that returns before the deadline, inside the spin that already
    /// resumed the sleep early (a 3 ms spin, the cancel 1.5 ms before the
    /// deadline), still throws `CancellationError`: at the deadline, never
    /// before it. A round counts only when the cancel did return before the
    /// deadline; a cancel that comes after it may lose to the sleep's end.
    func testACancelInsideTheSpinThatResumedTheSleepEarlyStillThrows() async throws {
        let scheduler = try spinningScheduler(name: "exec-cancel-spin", spinsLast: .milliseconds(3))
        var conclusive = 0
        for _ in 0..<12 {
            let deadline = PrecisionClock.monotonic.now + .milliseconds(8)
            let task = Task(executorPreference: scheduler) { () -> (threw: Bool, at: PrecisionClock.Instant) in
                do {
                    try await PrecisionClock.monotonic.sleep(until: deadline)
                    return (false, PrecisionClock.monotonic.now)
                } catch {
                    return (error is CancellationError, PrecisionClock.monotonic.now)
                }
            }
            let cancel = TimedCancel(task, at: deadline - .microseconds(1_500))
            let result = await task.value
            let returned = try await cancel.times().returned
            XCTAssertGreaterThanOrEqual(result.at, min(deadline, returned), "the sleep ended before the cancel and the deadline")
            guard returned < deadline else { continue }
            conclusive += 1
            XCTAssertTrue(result.threw, "cancel() returned \((deadline - returned).readable) before the deadline, "
                          + "yet the sleep returned normally \((result.at - deadline).readable) after it")
        }
        if conclusive == 0 { throw XCTSkip("no cancel returned before its deadline (a busy machine)") }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// The same for an actor on the scheduler.
    func testACancelInsideTheSpinThatResumedAnActorsSleepEarlyStillThrows() async throws {
        let scheduler = try spinningScheduler(name: "exec-cancel-spin-actor", spinsLast: .milliseconds(3))
        actor Sleeper {
            let scheduler: TimerScheduler
            init(scheduler: TimerScheduler) { self.scheduler = scheduler }
            nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
            func sleep(until deadline: PrecisionClock.Instant) async -> Bool {
                do {
                    try await PrecisionClock.monotonic.sleep(until: deadline)
                    return false
                } catch {
                    return error is CancellationError
                }
            }
        }
        let sleeper = Sleeper(scheduler: scheduler)
        var conclusive = 0
        for _ in 0..<12 {
            let deadline = PrecisionClock.monotonic.now + .milliseconds(8)
            let task = Task { await sleeper.sleep(until: deadline) }
            let cancel = TimedCancel(task, at: deadline - .microseconds(1_500))
            let threw = await task.value
            let returned = try await cancel.times().returned
            guard returned < deadline else { continue }
            conclusive += 1
            XCTAssertTrue(threw, "cancel() returned \((deadline - returned).readable) before the deadline, "
                          + "yet the actor's sleep returned normally")
        }
        if conclusive == 0 { throw XCTSkip("no cancel returned before its deadline (a busy machine)") }
    }

    private func threadExists(_ tid: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)")
    }
}

extension TimerEngine {
    /// Test hook: a one-shot timer `delay` from now whose handler runs `body` on
    /// the engine thread (a blocking body keeps the thread busy, so jobs
    /// enqueued meanwhile wait in the queue). Not cancellable: it fires once.
    func startTestTimer(after delay: Duration = .zero, _ body: @escaping @Sendable () -> Void) {
        let node = TimerNode(engine: self, source: .monotonic,
                             deadline: now(.monotonic).saturatingAdd(delay.saturatingNanoseconds), period: .zero,
                             leeway: 0, policy: .skip, delivery: .inline, handler: .plain { _ in body() })
        start(node)
    }
}
