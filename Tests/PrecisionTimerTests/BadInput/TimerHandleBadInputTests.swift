@testable import PrecisionTimer
import XCTest

/// Bad input to calls on a timer's handle, ``OneShotTimer`` and ``RepeatingTimer``, and on its
/// ``Tick``: after cancel, after firing, twice (`Timers/ScheduledTimer.swift`). `CONTRIBUTING.md`
/// names these tests row by row against the tables of `PrecisionTimer.docc/BadInput.md`; the
/// helpers are in `BadInputSupport.swift`.
final class TimerHandleBadInputTests: BadInputTestCase {
    func testCancelAfterAOneShotFiredLeavesItFired() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = scheduler.schedule(after: .milliseconds(1)) { _ in }
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(timer.hasFired)
        timer.cancel()
        XCTAssertTrue(timer.hasFired, "a fired one-shot stays fired")
        XCTAssertFalse(timer.isCancelled)
    }

    func testCancelTwiceIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.cancel()
        XCTAssertTrue(timer.isCancelled)
        XCTAssertNil(timer.nextDeadline)
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testEveryCallOnACancelledRepeatingTimerIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        timer.setInterval(.milliseconds(5))
        XCTAssertEqual(timer.interval, .milliseconds(1), "unchanged")
        try timer.setNextDeadline(clock.now())
        XCTAssertNil(timer.nextDeadline)
        try timer.setNextDeadline(.max)
        XCTAssertNil(timer.nextDeadline)
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        XCTAssertEqual(scheduler.statistics.fires, 0)
    }

    func testEveryCallOnACancelledOneShotIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.schedule(after: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        timer.cancel()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertFalse(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testSuspendAndResumeTwiceAreIdempotent() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        let next = timer.nextDeadline
        timer.resume()  // not suspended: nothing to do
        XCTAssertEqual(timer.nextDeadline, next)
        timer.suspend()
        timer.suspend()
        XCTAssertTrue(timer.isSuspended)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(calls.count, 0)
        timer.resume()
        timer.resume()
        XCTAssertFalse(timer.isSuspended)
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(calls.all, [2, 3, 4, 5], "one fire per tick after the resume: queued once, not twice")
    }

    func testCallsOnAFiredOneShotAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int>()
        let timer = scheduler.schedule(after: .milliseconds(1)) { calls.append($0.index) }
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(timer.hasFired)
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 1, "fired once, and only once")
        XCTAssertTrue(timer.hasFired)
        timer.cancel()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFireTwiceBeforeItRunsMergesOnAOneShotButNotOnARepeatingTimer() throws {
        let (scheduler, clock) = makeScheduler()
        let oneShotCalls = Recorder<Tick>()
        let oneShot = scheduler.schedule(after: .seconds(1)) { oneShotCalls.append($0) }
        oneShot.fire()
        oneShot.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(oneShotCalls.all.map(\.isManual), [true])
        XCTAssertTrue(oneShot.hasFired)

        let repeatingCalls = Recorder<Tick>()
        let repeating = scheduler.repeating(every: .seconds(1)) { repeatingCalls.append($0) }
        let next = repeating.nextDeadline
        repeating.fire()
        repeating.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(repeatingCalls.all.map(\.isManual), [true, true])
        XCTAssertEqual(repeating.nextDeadline, next, "the grid does not move")
    }

    func testFireOnASuspendedTimerRunsTheHandlerOnce() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Tick>()
        let repeating = scheduler.repeating(every: .milliseconds(1)) { calls.append($0) }
        repeating.suspend()
        repeating.fire()
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.all.map(\.isManual), [true])
        XCTAssertTrue(repeating.isSuspended, "still suspended")

        let oneShotCalls = Recorder<Tick>()
        let oneShot = scheduler.schedule(after: .seconds(1)) { oneShotCalls.append($0) }
        oneShot.suspend()
        oneShot.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(oneShotCalls.all.map(\.isManual), [true])
        XCTAssertTrue(oneShot.hasFired)
        XCTAssertFalse(oneShot.isSuspended)
    }

    func testSetIntervalPastTheRangeKeepsThePendingTick() throws {
        let (scheduler, _) = makeScheduler()
        let timer = scheduler.repeating(every: .milliseconds(2)) { _ in }
        let next = timer.nextDeadline
        // Too large for Int64 nanoseconds: the pending tick keeps its deadline,
        // the ones after it never come.
        for interval in overflowing {
            timer.setInterval(interval)
            XCTAssertEqual(timer.interval, .nanoseconds(Int64.max), "\(interval)")
            XCTAssertEqual(timer.nextDeadline, next)
        }
    }

    func testSetIntervalBelowTheLeewayClampsTheLeeway() throws {
        let (scheduler, _) = makeScheduler()
        let timer = scheduler.repeating(every: .milliseconds(10), leeway: .milliseconds(5)) { _ in }
        timer.setInterval(.milliseconds(2))
        XCTAssertEqual(timer.interval, .milliseconds(2))
        XCTAssertEqual(timer.leeway, .milliseconds(2) - .nanoseconds(1))
    }

    func testSetNextDeadlineRejectsFarPastDeadlinesAndTakesNever() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { ticks.append($0) }
        let next = timer.nextDeadline
        let limit = clock.now() - .nanoseconds(Int64(1) << 62)
        for deadline in [Instant.min, limit - .nanoseconds(1)] {
            assertThrows(.deadlineOutOfRange, try timer.setNextDeadline(deadline), "\(deadline)")
        }
        XCTAssertEqual(timer.nextDeadline, next, "unchanged")
        try timer.setNextDeadline(.max)
        XCTAssertEqual(timer.nextDeadline, .max, "never, until moved again")
        XCTAssertNil(scheduler.engine.nextWake())
        // A past deadline within range fires at once, on the moved grid.
        try timer.setNextDeadline(clock.now() - .milliseconds(5))
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.deadline), [clock.now()])
        XCTAssertEqual(ticks.all.map(\.missed), [5])
    }

    func testTickCancelTimerTwiceOrAfterCancelIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { tick in
            ticks.append(tick)
            tick.cancelTimer()
            tick.cancelTimer()  // inside its own handler: returns at once, twice
        }
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(ticks.count, 1)
        XCTAssertTrue(timer.isCancelled)
        let stale = try XCTUnwrap(ticks.all.first)
        stale.cancelTimer()  // after the cancel, from outside the handler
        timer.cancel()
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }
}
