@testable import PrecisionTimer
import XCTest

/// Bad input to ``VirtualClock`` and the schedulers it drives (`Engine/VirtualClock.swift`).
/// `CONTRIBUTING.md` names these tests row by row against the tables of
/// `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class VirtualClockBadInputTests: BadInputTestCase {
    func testOneVirtualClockDrivesSeveralSchedulersInTimeOrder() throws {
        let clock = VirtualClock()
        let start = clock.now()
        let first = TimerScheduler(clock: clock)
        let second = TimerScheduler(clock: clock)
        let log = Recorder<String>()
        let a = first.repeating(every: .milliseconds(3)) { log.append("a\($0.index)@\(($0.firedAt - start).ns)") }
        let b = second.repeating(every: .milliseconds(2)) { log.append("b\($0.index)@\(($0.firedAt - start).ns)") }
        clock.advance(by: .milliseconds(6))
        XCTAssertEqual(log.all, ["b0@2000000", "a0@3000000", "b1@4000000", "a1@6000000", "b2@6000000"])
        withExtendedLifetime((a, b)) {}
    }

    func testVirtualTimeAtTheEndOfTheRangeNeverFiresASaturatedDeadline() throws {
        // Near Int64.max the grid saturates: the tick at .max means "never", so
        // advancing to the end of time terminates instead of firing it forever.
        let clock = VirtualClock(monotonic: .max - 5_000_000)
        let scheduler = TimerScheduler(clock: clock)
        let ticks = Recorder<Int>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { ticks.append($0.index) }
        clock.advance(to: .max)
        XCTAssertEqual(ticks.all, [0, 1, 2, 3])  // .max − 4 ms … .max − 1 ms; the next would be .max
        XCTAssertEqual(clock.now(), .max)
        withExtendedLifetime(timer) {}
    }

    func testVirtualClockNegativeAdvanceAndBusyAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.schedule(after: .nanoseconds(1)) { calls.append($0.index) }
        let now = clock.now()
        let wall = clock.now(.realtime)
        for duration in [Duration.nanoseconds(-1), .seconds(-1)] + hugelyNegative {
            clock.advance(by: duration)
            clock.busy(for: duration)
        }
        clock.advance(to: now - .seconds(1))
        clock.advance(to: .min)
        XCTAssertEqual(clock.now(), now)
        XCTAssertEqual(clock.now(.realtime), wall)
        XCTAssertEqual(calls.count, 0)
        withExtendedLifetime(timer) {}
    }

    func testVirtualClockOverflowingAdvanceSaturatesAtMax() throws {
        for duration in overflowing {
            let (scheduler, clock) = makeScheduler()
            let calls = Recorder<Instant>()
            let timer = scheduler.schedule(after: .seconds(1)) { _ in calls.append(clock.now()) }
            let due = timer.deadline
            clock.advance(by: duration)
            XCTAssertEqual(clock.now(), .max, "\(duration)")
            XCTAssertEqual(calls.all, [due], "a timer due on the way fires on time")
        }
    }

    func testVirtualClockSetRealtimeMovesOnlyTheWallClock() throws {
        let (scheduler, clock) = makeScheduler()
        let wall = Recorder<Instant>()
        let steady = Recorder<Instant>()
        let wallStart = clock.now(.realtime)
        let wallTimer = scheduler.schedule(at: wallStart + .milliseconds(10), clock: .realtime) {
            wall.append($0.firedAt)
        }
        let steadyTimer = scheduler.schedule(after: .milliseconds(10)) { steady.append($0.firedAt) }
        clock.setRealtime(wallStart - .seconds(3_600))  // set back an hour
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(steady.count, 1, "monotonic timers are not affected")
        XCTAssertEqual(wall.count, 0, "the wall clock has not reached the deadline again")
        clock.setRealtime(.min)
        XCTAssertEqual(wall.count, 0)
        clock.setRealtime(wallStart + .seconds(3_600))  // set forward: due now
        XCTAssertEqual(wall.all, [wallStart + .seconds(3_600)])
        withExtendedLifetime((wallTimer, steadyTimer)) {}
    }

    /// A handler sets the wall clock back while a wall-clock tick collected
    /// with it waits: that tick still runs, once, stamped with the new time
    /// (its fire was decided when its deadline came), and nothing else fires.
    func testSetRealtimeBackFromAHandlerStillRunsAWallClockTickAlreadyCollected() throws {
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now() + .milliseconds(10)
        let wall0 = clock.now(.realtime) + .milliseconds(10)  // the wall clock at t0
        let wall = Recorder<Tick>()
        let setter = scheduler.schedule(at: t0) { _ in clock.setRealtime(wall0 - .milliseconds(10)) }
        let wallTimer = scheduler.schedule(at: wall0, clock: .realtime) { wall.append($0) }
        clock.advance(to: t0)
        XCTAssertEqual(wall.all.map(\.firedAt), [wall0 - .milliseconds(10)])
        XCTAssertEqual(wall.all.map(\.deadline), [wall0])
        XCTAssertTrue(wallTimer.hasFired)
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(wall.count, 1, "a one-shot: no second fire when the wall clock reaches its deadline again")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        withExtendedLifetime((setter, wallTimer)) {}
    }
}
