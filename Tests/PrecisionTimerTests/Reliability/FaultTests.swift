import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// Signals received by `FaultTests`' SIGUSR2 handler (a C signal handler can
/// capture nothing, so the count is global).
let signalsReceived = Atomic<Int>(0)

/// Hostile conditions: signals mid-sleep, a realtime request the system refuses,
/// the wall clock being set, handlers that cancel, drop and schedule timers from
/// the scheduler thread. Exact properties are asserted exactly (never early, on
/// the grid, none lost); real-time bounds are generous (shared 2-core VMs).
final class FaultTests: XCTestCase {
    // MARK: - Signals

    func testSignalsAtTenKilohertzNeitherMoveTheGridNorLoseTimers() throws {
        // No SA_RESTART: every wait of the scheduler thread sees EINTR.
        let previous = installSignalHandler(SIGUSR2, restart: false) { _ in
            signalsReceived.add(1, ordering: .relaxed)
        }
        XCTAssertNotNil(previous)
        defer { previous?.restore() }

        // Signals unblocked on the scheduler thread (they are blocked by
        // default): every wait it makes can end with EINTR.
        var options = TimerScheduler.Options(name: "test-signals")
        options.blocksAsyncSignals = false
        let scheduler = try TimerScheduler(options: options)
        let clock = PrecisionClock()
        let target = LockedValue<pthread_t?>(nil)
        let probe = scheduler.schedule(after: .zero) { _ in target.withLock { $0 = pthread_self() } }
        XCTAssertTrue(waitUntil { target.withLock { $0 } != nil })
        withExtendedLifetime(probe) {}
        let thread = try XCTUnwrap(target.withLock { $0 })

        let run = Duration.seconds(1)
        let start = clock.now + .milliseconds(5)
        let end = start + run
        // A skip timer (zero leeway: the spinning path), a burst timer with leeway
        // (the sleeping path) and one-shots spread over the run.
        let skip = Recorder<Tick>()
        let burst = Recorder<Tick>()
        let skipTimer = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { tick in
            skip.append(tick)
        }
        let burstTimer = try scheduler.repeating(every: .microseconds(2_500), startingAt: start,
                                                 leeway: .microseconds(500), policy: .burst) { burst.append($0) }
        let oneShotFires = Recorder<Int>()
        let early = Atomic<Int>(0)
        var oneShots: [OneShotTimer] = []
        for i in 0..<200 {
            let deadline = start + .microseconds(Int64(i) * 4_900 + 17)
            oneShots.append(scheduler.schedule(at: deadline, leeway: .microseconds(Int64(i % 3) * 200)) { tick in
                if clock.now < deadline || tick.firedAt < deadline { early.add(1, ordering: .relaxed) }
                oneShotFires.append(i)
            })
        }

        // The sender: one signal every 100 µs on an absolute grid.
        signalsReceived.store(0, ordering: .relaxed)
        var sent = 0
        var next = start
        while next < end {
            _ = try clock.wait(until: next)
            if pthread_kill(thread, SIGUSR2) == 0 { sent += 1 }
            next = next + .microseconds(100)
        }
        // The timers catch up with the end of the run before they stop: a
        // scheduler thread slowed by a sanitizer or a busy host may trail the
        // sender by more than a few milliseconds, and a skip timer that is late
        // still reports every grid tick it passed.
        XCTAssertTrue(waitUntil { (skip.all.last?.index ?? 0) >= 999 && burst.count >= 400 },
                      "the timers reached the end of the run")
        skipTimer.cancel()
        burstTimer.cancel()

        XCTAssertGreaterThan(sent, 5_000, "the sender must really have signalled at a high rate")
        XCTAssertGreaterThan(signalsReceived.load(ordering: .relaxed), 1_000, "the scheduler thread took the signals")

        // Skip timer: on its grid, never early, every grid tick fired or reported missed.
        let expected = assertSkipTicksOnGrid(skip.all, start: start, interval: .milliseconds(1))
        XCTAssertGreaterThanOrEqual(expected, 1_000, "the grid covered the whole second")
        // Burst timer: every tick exactly once, in order, never early.
        let indices = burst.all.map(\.index)
        XCTAssertEqual(indices, Array(0..<indices.count), "burst ticks lost or repeated")
        XCTAssertGreaterThanOrEqual(indices.count, 400)
        XCTAssertTrue(burst.all.allSatisfy { $0.firedAt >= $0.deadline }, "early burst tick")
        // One-shots: each exactly once, never early.
        XCTAssertTrue(waitUntil { oneShotFires.count >= 200 }, "one-shots lost: \(200 - oneShotFires.count)")
        XCTAssertEqual(oneShotFires.all.sorted(), Array(0..<200), "each one-shot fires exactly once")
        XCTAssertEqual(early.load(ordering: .relaxed), 0)
        withExtendedLifetime(oneShots) {}
    }

    // MARK: - Realtime priority refused

    func testRealtimePriorityRefusedByTheSystemIsReportedAndTheSchedulerWorks() throws {
        // Not injected: the scheduler is created from a thread that has dropped
        // CAP_SYS_NICE (capabilities are per thread; its new thread inherits the
        // reduced set) while RLIMIT_RTPRIO is 0, so the kernel itself refuses
        // SCHED_FIFO with EPERM.
        let made = try withRealtimeRefusedByTheKernel {
            Result { try TimerScheduler(options: .init(priority: .realtime(50), name: "test-refused")) }
        }
        let scheduler = try made.get()

        XCTAssertEqual(scheduler.threadReport.realtime, .refused(.notPermitted))
        let fired = Atomic<Int>(0)
        let timer = scheduler.repeating(every: .milliseconds(2)) { tick in
            if fired.add(1, ordering: .relaxed).newValue >= 10 { tick.cancelTimer() }
        }
        XCTAssertTrue(waitUntil { timer.isCancelled }, "the scheduler carries on at normal priority")
        XCTAssertEqual(fired.load(ordering: .relaxed), 10)
    }

    // MARK: - Wall-clock changes (virtual time: this machine's clock is never set)

    func testSettingTheWallClockForwardFiresWhatIsNowDueAtOnce() throws {
        let (scheduler, clock) = makeScheduler()
        let wall = clock.now(.realtime)
        let mono = clock.now()
        let log = Recorder<String>()
        let soon = scheduler.schedule(at: wall + .seconds(10), clock: .realtime) { tick in
            log.append("wall+10 at \(tick.firedAt - wall)")
        }
        let later = scheduler.schedule(at: wall + .seconds(100), clock: .realtime) { _ in log.append("wall+100") }
        let monotonic = scheduler.schedule(after: .seconds(20)) { _ in log.append("mono+20") }

        // Set forward by 30 s: no advance of time is needed for the due timer to fire.
        clock.setRealtime(wall + .seconds(30))
        XCTAssertEqual(log.all, ["wall+10 at 30.0 seconds"])
        XCTAssertEqual(scheduler.statistics.wallClockChanges, 1)
        XCTAssertEqual(clock.now(), mono, "the monotonic clock did not move")

        // The monotonic timer keeps its own schedule, the later wall-clock one its instant.
        clock.advance(by: .seconds(20))
        XCTAssertEqual(log.all, ["wall+10 at 30.0 seconds", "mono+20"])
        clock.advance(by: .seconds(49))  // wall is now +99 s
        XCTAssertEqual(log.count, 2)
        clock.advance(by: .seconds(1))
        XCTAssertEqual(log.all.last, "wall+100")
        withExtendedLifetime((soon, later, monotonic)) {}
    }

    func testARepeatingWallClockTimerFollowsTheClockBothWays() throws {
        let (scheduler, clock) = makeScheduler()
        let wall = clock.now(.realtime)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .seconds(1), startingAt: wall + .seconds(1), clock: .realtime) {
            ticks.append($0)
        }
        clock.advance(by: .milliseconds(2_500))
        XCTAssertEqual(ticks.all.map(\.index), [0, 1])

        // Forward 10 s (wall + 12.5 s): one fire at once for the latest due tick,
        // the jumped-over ticks reported missed, the grid kept.
        clock.setRealtime(wall + .milliseconds(12_500))
        let jump = try XCTUnwrap(ticks.all.last)
        XCTAssertEqual(jump.index, 11)
        XCTAssertEqual(jump.missed, 9)
        XCTAssertEqual(jump.deadline, wall + .seconds(12))
        XCTAssertEqual(jump.firedAt, wall + .milliseconds(12_500))

        // Back 60 s (wall − 47.5 s): nothing fires until the wall clock reaches
        // the next grid instant again, and never before it.
        clock.setRealtime(wall - .milliseconds(47_500))
        clock.advance(by: .seconds(60))  // wall + 12.5 s again
        XCTAssertEqual(ticks.count, 3)
        clock.advance(by: .milliseconds(500))
        let resumed = try XCTUnwrap(ticks.all.last)
        XCTAssertEqual(resumed.index, 12)
        XCTAssertEqual(resumed.missed, 0)
        XCTAssertEqual(resumed.firedAt, wall + .seconds(13))
        XCTAssertEqual(scheduler.statistics.wallClockChanges, 2)
        withExtendedLifetime(timer) {}
    }

    func testARealSchedulerWatchesForWallClockChanges() throws {
        // The kernel's notifier can be opened and reports nothing while nobody
        // sets the time (setting it here is not allowed: shared machine).
        switch WallClockWatcher.openNotifier() {
        case .success(let fd):
            XCTAssertEqual(WallClockWatcher.wait(fd, timeoutMilliseconds: 20), .timedOut)
            XCTAssertNoThrow(try system_clock_change_close(fd).get())
        case .failure(let errno):
            XCTFail("timerfd with TFD_TIMER_CANCEL_ON_SET: \(errno)")
        }
        // A real scheduler with a wall-clock timer starts the watcher, and a
        // reported change makes it re-plan without losing or moving the timer.
        let scheduler = try TimerScheduler(options: .init(name: "test-wall"))
        let wall = PrecisionClock.realtime
        let deadline = wall.now + .milliseconds(50)
        let firedAt = LockedValue<PrecisionClock.Instant?>(nil)
        let timer = scheduler.schedule(at: deadline, clock: .realtime) { tick in
            firedAt.withLock { $0 = tick.firedAt }
        }
        XCTAssertTrue(WallClockWatcher.shared.isActive)
        scheduler.engine.wallClockChanged()  // what the watcher calls on a change
        XCTAssertEqual(scheduler.statistics.wallClockChanges, 1)
        XCTAssertTrue(waitUntil { firedAt.withLock { $0 } != nil })
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(firedAt.withLock { $0 }), deadline, "never early")
        withExtendedLifetime(timer) {}
    }

    // MARK: - Handlers that drop, cancel and schedule timers (real thread)

    func testAHandlerThatReleasesItsOwnTimerStopsItWithoutDeadlock() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-self-drop"))
        let holder = LockedValue<RepeatingTimer?>(nil)
        let fires = Atomic<Int>(0)
        let flag = DeinitFlag()
        holder.withLock {
            $0 = scheduler.repeating(every: .milliseconds(1)) { [captured = Owner(flag: flag)] tick in
                _ = captured
                if fires.add(1, ordering: .relaxed).newValue == 3 {
                    // The last reference goes away inside the handler: its deinit
                    // cancels from the scheduler thread, which must not wait for itself.
                    let mine = holder.withLock { h in defer { h = nil }; return h }
                    _ = mine
                }
            }
        }
        XCTAssertNotNil(holder.withLock { $0 })
        XCTAssertTrue(waitUntil { holder.withLock { $0 } == nil })
        usleep(20_000)
        XCTAssertEqual(fires.load(ordering: .relaxed), 3, "no tick after the timer was released")
        XCTAssertTrue(waitUntil { flag.isSet }, "the handler's captures were released")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testAHandlerCancelsATimerRunningOnAQueueAndSchedulesAnEarlierOneWithoutALostWakeUp() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-reentry"))
        let queue = DispatchQueue(label: "test-reentry.queue")
        let clock = PrecisionClock()
        // A victim whose handler is slow, on a queue.
        let victimRuns = Atomic<Int>(0)
        let victimStopped = Atomic<Bool>(false)
        let victimLate = Atomic<Int>(0)
        let victim = scheduler.repeating(every: .milliseconds(2), delivery: .queue(queue)) { _ in
            if victimStopped.load(ordering: .acquiring) { victimLate.add(1, ordering: .relaxed) }
            victimRuns.add(1, ordering: .relaxed)
            usleep(3_000)
        }
        // A far-away timer, so the scheduler's planned wake is ten seconds out.
        let far = scheduler.schedule(after: .seconds(10)) { _ in }
        XCTAssertTrue(waitUntil { victimRuns.load(ordering: .relaxed) >= 3 })

        let childDeadline = LockedValue<PrecisionClock.Instant?>(nil)
        let childFiredAt = LockedValue<PrecisionClock.Instant?>(nil)
        let children = LockedValue<[OneShotTimer]>([])
        let parent = scheduler.schedule(after: .milliseconds(5)) { _ in
            // Cancel another timer (synchronous: its queue handler finishes first).
            victim.cancel()
            victimStopped.store(true, ordering: .releasing)
            // Schedule from the scheduler thread a timer earlier than its planned wake.
            let deadline = clock.now + .milliseconds(3)
            childDeadline.withLock { $0 = deadline }
            let child = scheduler.schedule(at: deadline) { tick in
                childFiredAt.withLock { $0 = tick.firedAt }
            }
            children.withLock { $0.append(child) }
        }
        XCTAssertTrue(waitUntil(timeout: .seconds(5)) { childFiredAt.withLock { $0 } != nil },
                      "the child scheduled from a handler did not fire before the far timer: a lost wake-up")
        let deadline = try XCTUnwrap(childDeadline.withLock { $0 })
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(childFiredAt.withLock { $0 }), deadline, "never early")
        queue.sync {}
        XCTAssertEqual(victimLate.load(ordering: .relaxed), 0, "the victim ran after cancel returned")
        XCTAssertTrue(victim.isCancelled)
        withExtendedLifetime((far, parent)) {}
    }
}
