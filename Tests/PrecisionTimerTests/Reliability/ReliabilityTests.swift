import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// The reliability promises, each tried by the program that broke it: an object
/// that owns its one-shot, a signal in the middle of a long wait, a suspend
/// racing a collected tick, a fired-then-cancelled timer on a private
/// scheduler, an interval change late in a timer's life, a cancel racing the
/// start of an async sleep, a slow queue handler, a new earliest timer during a
/// spin, and "never" deadlines. A test that could hang runs its body off the
/// test thread with a timeout, so a regression fails instead of stopping the run.
final class ReliabilityTests: XCTestCase {
    // MARK: - 1. An object that owns its one-shot

    final class SelfOwner: @unchecked Sendable {
        var timer: OneShotTimer?
        var n = 0
        let flag: DeinitFlag
        init(flag: DeinitFlag) { self.flag = flag }
        deinit { flag.set() }
    }

    func testObjectOwningItsOneShotDoesNotDeadlockTheScheduler() throws {
        let scheduler = try TimerScheduler(options: .init(name: "t-selfowner"))
        let flag = DeinitFlag()
        var owner: SelfOwner? = SelfOwner(flag: flag)
        // The handler ends its timer, which lets go of the handler (and the
        // owner) right after the call, on the scheduler's thread.
        owner!.timer = scheduler.schedule(after: .milliseconds(5)) { [owner] tick in
            owner!.n += 1
            tick.cancelTimer()
        }
        owner = nil
        XCTAssertTrue(waitUntil(timeout: .seconds(5)) { flag.isSet }, "the owner's deinit ran after its one-shot")
        // The scheduler must still serve timers.
        let fired = DispatchSemaphore(value: 0)
        let probe = scheduler.schedule(after: .milliseconds(5)) { _ in fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success, "a timer after the owner's deinit never fired")
        withExtendedLifetime(probe) {}
    }

    func testObjectOwningItsOneShotUnderVirtualTimeDoesNotHang() {
        let finished = runOffTheTestThread(timeout: 10) {
            let (scheduler, clock) = makeScheduler()
            let flag = DeinitFlag()
            var owner: SelfOwner? = SelfOwner(flag: flag)
            owner!.timer = scheduler.schedule(after: .milliseconds(5)) { [owner] tick in
                owner!.n += 1
                tick.cancelTimer()  // lets go of the handler (and the owner) after the call
            }
            owner = nil
            clock.advance(by: .milliseconds(10))
            return flag.isSet
        }
        XCTAssertEqual(finished, true, "advance hung (or the owner outlived its one-shot)")
    }

    func testWeakOwnerDeathWhoseHandleReleaseRunsOnTheSchedulerThread() throws {
        // The owner stores its repeating timer; the last strong reference to the
        // owner is captured by a one-shot, so the owner dies on the scheduler
        // thread and its deinit releases the repeating timer there.
        final class Holder: Sendable {
            let timer = LockedValue<RepeatingTimer?>(nil)
            let flag: DeinitFlag
            init(flag: DeinitFlag) { self.flag = flag }
            deinit { flag.set() }
        }
        let scheduler = try TimerScheduler(options: .init(name: "t-weakowner"))
        let flag = DeinitFlag()
        var holder: Holder? = Holder(flag: flag)
        let repeating = scheduler.repeating(every: .milliseconds(1), owner: holder!) { _, _ in }
        holder!.timer.withLock { $0 = repeating }
        let carrier = scheduler.schedule(after: .milliseconds(3)) { [holder] tick in
            _ = holder
            tick.cancelTimer()  // the holder goes with the handler, after the call
        }
        holder = nil
        XCTAssertTrue(waitUntil(timeout: .seconds(5)) { flag.isSet })
        let fired = DispatchSemaphore(value: 0)
        let probe = scheduler.schedule(after: .milliseconds(2)) { _ in fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success, "the scheduler stopped after the owner died on it")
        withExtendedLifetime((carrier, probe)) {}
    }

    // MARK: - 2. A signal in the middle of a long wait

    func testSignalDuringALongWaitNeitherSpinsNorBlocksNewTimers() throws {
        for blocks in [false, true] {
            var options = TimerScheduler.Options(name: "t-signal")
            options.blocksAsyncSignals = blocks
            let scheduler = try TimerScheduler(options: options)
            let thread = try schedulerThread(of: scheduler)
            let far = scheduler.schedule(after: .seconds(6)) { _ in }
            usleep(20_000)  // the thread is asleep toward the far deadline
            installSignalHandler(SIGUSR1, restart: false) { _ in }
            for _ in 0..<20 {
                pthread_kill(thread, SIGUSR1)
                usleep(500)
            }
            let fired = DispatchSemaphore(value: 0)
            let near = scheduler.schedule(after: .milliseconds(10)) { _ in fired.signal() }
            XCTAssertEqual(fired.wait(timeout: .now() + 5), .success,
                           "a 10 ms timer after a signal did not fire within 5 s (blocking signals: \(blocks))")
            // While only the far timer is left, the thread sleeps.
            let cpu = threadCPUTime(thread, over: .milliseconds(500)) {
                for _ in 0..<50 {
                    pthread_kill(thread, SIGUSR1)
                    usleep(10_000)
                }
            }
            XCTAssertLessThan(cpu, .milliseconds(25),
                              "the scheduler thread used \(cpu) of CPU in 500 ms with signals (blocking: \(blocks))")
            far.cancel()
            withExtendedLifetime(near) {}
        }
    }

    // MARK: - 3. suspend() is synchronous

    func testSuspendFromAnotherHandlerInTheSameWakeUpDropsTheCollectedTick() throws {
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now()
        let calls = Recorder<Tick>()
        let suspendedWhenCalled = Recorder<Bool>()
        let box = LockedValue<RepeatingTimer?>(nil)
        let a = try scheduler.repeating(every: .seconds(1), startingAt: t0 + .seconds(1)) { tick in
            calls.append(tick)
            suspendedWhenCalled.append(box.withLock { $0?.isSuspended ?? false })
        }
        box.withLock { $0 = a }
        let stall = scheduler.schedule(at: t0 + .milliseconds(2_400)) { _ in clock.busy(for: .milliseconds(700)) }
        let suspender = scheduler.schedule(at: t0 + .milliseconds(2_500)) { _ in a.suspend() }
        clock.advance(to: t0 + .seconds(5))
        XCTAssertEqual(calls.all.map(\.index), [0, 1], "tick 2 ran after a.suspend() returned")
        XCTAssertEqual(suspendedWhenCalled.all, [false, false])
        // Resumed at t0 + 5 s: tick 4 is the latest due; ticks 2 (dropped) and 3 are missed.
        a.resume()
        clock.advance(by: .zero)
        XCTAssertEqual(calls.all.map(\.index), [0, 1, 4])
        XCTAssertEqual(calls.all.last?.missed, 2)
        XCTAssertEqual(calls.all.last?.deadline, t0 + .seconds(5))
        withExtendedLifetime((stall, suspender)) {}
        box.withLock { $0 = nil }
    }

    func testSuspendDropsDeliveriesWaitingOnTheirQueue() throws {
        let scheduler = try TimerScheduler(options: .init(name: "t-suspendq"))
        let queue = DispatchQueue(label: "t-suspendq")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // the queue is busy
        let suspendedAt = Atomic<Bool>(false)
        let callsAfterSuspend = Atomic<Int>(0)
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .milliseconds(5), delivery: .queue(queue)) { tick in
            if suspendedAt.load(ordering: .acquiring) { callsAfterSuspend.add(1, ordering: .relaxed) }
            ticks.append(tick)
        }
        usleep(30_000)
        timer.suspend()
        suspendedAt.store(true, ordering: .releasing)
        gate.signal()
        queue.sync {}
        usleep(30_000)
        queue.sync {}
        XCTAssertEqual(callsAfterSuspend.load(ordering: .relaxed), 0, "handler calls started after suspend() returned")
        // Resumed: the dropped deliveries and the ticks that fell due meanwhile are missed.
        suspendedAt.store(false, ordering: .releasing)
        timer.resume()
        XCTAssertTrue(waitUntil { ticks.count >= 1 })
        let first = try XCTUnwrap(ticks.all.first)
        XCTAssertGreaterThanOrEqual(first.missed, 6, "the ticks of ~60 ms suspended at 5 ms are reported missed")
        XCTAssertEqual(first.index, first.missed, "index = missed ticks before it: nothing lost, nothing twice")
        timer.cancel()
    }

    // MARK: - 5. fire() then cancel() on a private scheduler

    func testFireThenCancelOnAPrivateSchedulerLetsItsThreadEnd() throws {
        let name = "t-firecancel"
        for repeating in [false, true] {
            for _ in 0..<20 {
                let s = try TimerScheduler(options: .init(name: name))
                let t: any ScheduledTimer = repeating
                    ? s.repeating(every: .milliseconds(1)) { _ in }
                    : s.schedule(after: .milliseconds(1)) { _ in }
                t.fire()
                t.cancel()
            }
        }
        XCTAssertTrue(waitUntil(timeout: .seconds(10)) { threadsNamed(name) == 0 },
                      "\(threadsNamed(name)) scheduler threads left behind")
    }

    // MARK: - 6. setInterval / setNextDeadline late in a timer's life

    func testSetIntervalLateInATimersLifeKeepsAnExactSchedule() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() - .seconds(3_000)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { tick in
            ticks.append(tick)
            if ticks.count > 100 { tick.cancelTimer() }  // a storm ends here instead of hanging the test
        }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.index), [3_000_000])
        let pending = try XCTUnwrap(timer.nextDeadline)
        XCTAssertEqual(pending, clock.now() + .milliseconds(1))
        timer.setInterval(.seconds(3_600))
        clock.advance(by: .seconds(7_200))
        XCTAssertEqual(ticks.all.map(\.index), [3_000_000, 3_000_001, 3_000_002])
        XCTAssertEqual(ticks.all.dropFirst().map(\.deadline), [pending, pending + .seconds(3_600)])
        XCTAssertEqual(ticks.all.dropFirst().map(\.missed), [0, 0])
        // setNextDeadline re-anchors the same way.
        let moved = clock.now() + .seconds(10)
        try timer.setNextDeadline(moved)
        clock.advance(by: .seconds(3_610))
        XCTAssertEqual(ticks.all.suffix(2).map(\.deadline), [moved, moved + .seconds(3_600)])
        XCTAssertEqual(ticks.all.suffix(2).map(\.index), [3_000_003, 3_000_004])
        timer.cancel()
    }

    // MARK: - 7. A cancel racing the start of an async sleep

    func testCancelBeforeStartLeavesANodeThatNeverStarts() throws {
        let (scheduler, clock) = makeScheduler()
        let node = scheduler.makeOneShotNode(after: .seconds(1), clock: .monotonic, leeway: .zero,
                                             delivery: .inline, #function,
                                             .plain { _ in XCTFail("a cancelled sleep fired") })
        scheduler.engine.cancel(node, waitForHandler: false)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "a node cancelled before it started was counted")
        scheduler.engine.start(node)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "a cancelled node was started")
        XCTAssertNil(scheduler.engine.nextWake(), "a cancelled node is on the schedule")
        clock.advance(by: .seconds(2))
    }

    func testAsyncSleepsCancelledAtOnceLeaveNothingLive() async throws {
        let name = "t-sleeprace"
        do {
            let scheduler = try TimerScheduler(options: .init(name: name))
            for i in 0..<500 {
                let task = Task { try await scheduler.sleep(until: PrecisionClock.monotonic.now + .seconds(30)) }
                if i % 2 == 0 { await Task.yield() }
                task.cancel()
                _ = await task.result
            }
            XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        }
        XCTAssertTrue(waitUntil(timeout: .seconds(10)) { threadsNamed(name) == 0 },
                      "the released scheduler's thread did not end")
    }

    // MARK: - 8. .queue delivery follows the missed-tick policy

    func testQueueDeliveryKeepsOneTickInFlightAndCountsMissed() throws {
        let scheduler = try TimerScheduler(options: .init(name: "t-queuepolicy"))
        let queue = DispatchQueue(label: "t-queuepolicy")
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .milliseconds(2), delivery: .queue(queue)) { tick in
            ticks.append(tick)
            usleep(20_000)  // ten intervals per call
        }
        // A second of 20 ms calls on a 2 ms grid: a queue that piled ticks up
        // would run its last call about 900 ms behind its deadline.
        usleep(1_000_000)
        XCTAssertTrue(waitUntil { ticks.count > 3 }, "the queue ran the handler")
        timer.cancel()
        queue.sync {}
        let all = ticks.all
        XCTAssertTrue(all.contains { $0.missed > 0 }, "a slow queue handler's missed ticks were not counted")
        for (previous, tick) in zip(all, all.dropFirst()) {
            XCTAssertEqual(tick.index, previous.index + 1 + tick.missed, "skip: index = previous + 1 + missed")
        }
        // One tick in flight: a call is a couple of handler lengths behind its
        // deadline (generous here for a stalled VM), never the run's length.
        let worst = all.map { $0.firedAt.nanoseconds - $0.deadline.nanoseconds }.max() ?? 0
        XCTAssertLessThan(worst, 500_000_000, "ticks piled up on the queue: \(worst) ns behind")
    }

    // MARK: - 11. A backward step of the wall clock during a spin

    func testWallClockStepBackDuringASpinDoesNotKeepTheThreadSpinning() throws {
        // Sets the system time (and puts it back): needs CAP_SYS_TIME.
        let scheduler = try spinningScheduler(name: "t-wallspin", spinsLast: .milliseconds(2))
        let thread = try schedulerThread(of: scheduler)
        let wall = PrecisionClock.realtime
        let monotonic = PrecisionClock.monotonic
        // The step must land inside the spin, before the deadline: a test
        // thread that wakes too late on a loaded machine makes the attempt
        // inconclusive (a fire decided before the step would read as early),
        // and it is tried again.
        for _ in 0..<5 {
            let (deadline, dueAt) = (wall.now + .milliseconds(30), monotonic.now + .milliseconds(30))
            let calls = Recorder<(tick: Tick, wallAtCall: PrecisionClock.Instant)>()
            let timer = scheduler.schedule(at: deadline, clock: .realtime) { tick in
                calls.append((tick, wall.now))
            }
            defer { timer.cancel() }
            _ = try wall.wait(until: deadline - .milliseconds(1))  // inside the spin
            guard monotonic.now < dueAt - .microseconds(500) else { continue }
            guard stepWallClock(by: .milliseconds(-300)) else {
                throw XCTSkip("cannot set the system time here (needs CAP_SYS_TIME)")
            }
            guard monotonic.now < dueAt else {
                XCTAssertTrue(stepWallClock(by: .milliseconds(300)), "the wall clock could not be put back")
                continue
            }
            let cpu = threadCPUTime(thread, over: .milliseconds(200)) {}
            XCTAssertTrue(stepWallClock(by: .milliseconds(300)), "the wall clock could not be put back")
            XCTAssertLessThan(cpu, .milliseconds(50), "the thread spun \(cpu) of 200 ms after the wall clock stepped back")
            XCTAssertTrue(waitUntil { calls.count == 1 }, "the wall-clock timer did not fire after the clock was put back")
            let call = try XCTUnwrap(calls.all.first)
            XCTAssertGreaterThanOrEqual(call.wallAtCall, deadline, "early against the wall clock")
            XCTAssertGreaterThanOrEqual(call.tick.firedAt, deadline)
            return
        }
        throw XCTSkip("the test thread never woke ahead of the deadline to step the clock inside the spin")
    }

    // MARK: - Lifecycle promises without a failure report

    func testAReleasedRegistryCancelsItsTasks() throws {
        let (scheduler, clock) = makeScheduler()
        let runs = Atomic<Int>(0)
        var registry: TaskRegistry? = TaskRegistry(scheduler: scheduler)
        registry!.schedule("a", after: .seconds(1)) { runs.add(1, ordering: .relaxed) }
        registry!.schedule(after: .seconds(1), repeating: .seconds(1)) { runs.add(1, ordering: .relaxed) }
        XCTAssertEqual(scheduler.statistics.liveTimers, 2)
        registry = nil
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        clock.advance(by: .seconds(5))
        XCTAssertEqual(runs.load(ordering: .relaxed), 0)
    }

    func testReleasingASchedulerKeepsItsTimersRunning() throws {
        let fired = DispatchSemaphore(value: 0)
        var timer: OneShotTimer?
        do {
            let scheduler = try TimerScheduler(options: .init(name: "t-released"))
            timer = scheduler.schedule(after: .milliseconds(20)) { _ in fired.signal() }
        }
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success, "a timer of a released scheduler did not fire")
        XCTAssertEqual(timer?.hasFired, true)
        timer = nil
        XCTAssertTrue(waitUntil { threadsNamed("t-released") == 0 }, "the thread did not end after its last timer")
    }

    func testACancelledTimersCapturesGoOnlyAfterTheRunningCallEnds() throws {
        // A cancel from inside another handler does not wait; the running call of
        // the cancelled timer still holds what it captured until it returns.
        final class Capture: Sendable {
            let flag: DeinitFlag
            init(flag: DeinitFlag) { self.flag = flag }
            deinit { flag.set() }
        }
        let scheduler = try TimerScheduler(options: .init(name: "t-captures"))
        let queue = DispatchQueue(label: "t-captures")
        let flag = DeinitFlag()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let seenAlive = Atomic<Bool>(false)
        var capture: Capture? = Capture(flag: flag)
        let slow = scheduler.repeating(every: .milliseconds(1), delivery: .queue(queue)) { [capture] _ in
            entered.signal()
            proceed.wait()
            seenAlive.store(!capture!.flag.isSet, ordering: .releasing)
        }
        capture = nil
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        let canceller = scheduler.schedule(after: .zero) { _ in slow.cancel() }  // returns at once
        XCTAssertTrue(waitUntil { slow.isCancelled })
        XCTAssertFalse(flag.isSet, "captures released while the call still runs")
        proceed.signal()
        queue.sync {}
        XCTAssertTrue(seenAlive.load(ordering: .acquiring))
        XCTAssertTrue(waitUntil { flag.isSet }, "captures kept after the call ended")
        withExtendedLifetime(canceller) {}
    }

    // MARK: - 14. A thread that cannot be created

    func testSchedulerWhoseThreadCannotStartThrows() {
        injectedThreadStartError.store(EAGAIN, ordering: .relaxed)
        defer { injectedThreadStartError.store(0, ordering: .relaxed) }
        XCTAssertThrowsError(try TimerScheduler(options: .init(name: "t-nothread"))) { error in
            XCTAssertEqual(error as? PrecisionTimerError,
                           .system(PrecisionTimerError.Errno(rawValue: EAGAIN), operation: "pthread_create"))
        }
    }

    // MARK: - 16. A new earliest timer during a spin

    func testTimerScheduledDuringASpinFiresAtItsOwnDeadline() throws {
        // The thread spins the last 2 ms before a zero-leeway deadline, so the
        // test knows it is spinning when it schedules the earlier timer.
        let scheduler = try spinningScheduler(name: "t-spinnew", spinsLast: .milliseconds(2))
        let clock = PrecisionClock.monotonic
        for _ in 0..<10 {
            let order = Recorder<String>()
            let early = Atomic<Int>(0)
            let a = clock.now + .milliseconds(10)
            let b = a - .microseconds(600)
            let timerA = scheduler.schedule(at: a) { tick in
                if clock.now < a || tick.firedAt < a { early.add(1, ordering: .relaxed) }
                order.append("a")
            }
            _ = try clock.wait(until: a - .microseconds(1_200))  // inside the spin
            let timerB = scheduler.schedule(at: b) { tick in
                if clock.now < b || tick.firedAt < b { early.add(1, ordering: .relaxed) }
                order.append("b")
            }
            let scheduledBy = clock.now
            XCTAssertTrue(waitUntil { order.count == 2 })
            XCTAssertEqual(early.load(ordering: .relaxed), 0, "early fire")
            if scheduledBy < a {  // else the test thread stalled past both deadlines
                XCTAssertEqual(order.all, ["b", "a"], "a timer that became the earliest during the spin fired late")
            }
            withExtendedLifetime((timerA, timerB)) {}
        }
    }

    // MARK: - 17. "Never" is a valid deadline

    func testNeverDeadlinesAreAcceptedNeverFireAndCanBeCancelled() throws {
        let (scheduler, clock) = makeScheduler()
        let fires = Atomic<Int>(0)
        let timers: [any ScheduledTimer] = [
            scheduler.schedule(at: .max) { _ in fires.add(1, ordering: .relaxed) },
            scheduler.schedule(after: .seconds(Int64.max)) { _ in fires.add(1, ordering: .relaxed) },
            scheduler.schedule(afterSeconds: 1e300) { _ in fires.add(1, ordering: .relaxed) },
            scheduler.repeating(every: .seconds(Int64.max)) { _ in fires.add(1, ordering: .relaxed) },
            try scheduler.repeating(every: .seconds(1), startingAt: .max) { _ in fires.add(1, ordering: .relaxed) },
            scheduler.repeating(everySeconds: 1e20) { _ in fires.add(1, ordering: .relaxed) },
        ]
        XCTAssertEqual(scheduler.statistics.liveTimers, timers.count)
        XCTAssertNil(scheduler.engine.nextWake(), "a never deadline is not a wake-up")
        clock.advance(by: .seconds(Int64.max))  // to the end of time
        XCTAssertEqual(fires.load(ordering: .relaxed), 0)
        for t in timers { t.cancel() }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        XCTAssertTrue(timers.allSatisfy(\.isCancelled))
    }

    func testAsyncSleepUntilNeverSleepsUntilCancelled() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "t-never"))
        let task = Task { try await scheduler.sleep(until: .max) }
        XCTAssertTrue(waitUntil { scheduler.statistics.liveTimers == 1 }, "the sleep is waiting")
        await assertCancelThrowsCancellationError(task)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        let generic = Task { try await Task.sleep(for: .seconds(Int64.max), clock: PrecisionClock()) }
        try await Task.sleep(for: .milliseconds(20))
        await assertCancelThrowsCancellationError(generic)
    }
}

// MARK: - Helpers for real-thread reliability tests

/// The number of this process's threads whose name starts with `prefix`.
func threadsNamed(_ prefix: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { tid in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? ""
        return comm.hasPrefix(prefix)
    }.count
}

/// The pthread of a real scheduler's thread, read from inside a handler.
func schedulerThread(of scheduler: TimerScheduler) throws -> pthread_t {
    let target = LockedValue<pthread_t?>(nil)
    let probe = scheduler.schedule(after: .zero) { _ in target.withLock { $0 = pthread_self() } }
    guard waitUntil(timeout: .seconds(10), { target.withLock { $0 } != nil }) else {
        throw XCTSkip("the scheduler thread did not run a probe")
    }
    withExtendedLifetime(probe) {}
    return target.withLock { $0 }!
}

/// CPU time `thread` used while `body` ran for about `window`.
func threadCPUTime(_ thread: pthread_t, over window: Duration, _ body: () -> Void) -> Duration {
    var clockID = clockid_t()
    guard pthread_getcpuclockid(thread, &clockID) == 0 else { return .zero }
    let before = cmc_now_ns(clockID)
    let end = ContinuousClock.now + window
    body()
    while ContinuousClock.now < end { usleep(1_000) }
    return .nanoseconds(cmc_now_ns(clockID) - before)
}

/// Steps CLOCK_REALTIME by `offset` (as `clock_settime` does for an NTP step).
/// Returns false when the process may not set the time.
func stepWallClock(by offset: Duration) -> Bool {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    let now = PrecisionClock.Instant(ts) + offset
    var target = now.timespec
    return clock_settime(CLOCK_REALTIME, &target) == 0
}
