import Dispatch
@testable import PrecisionTimer
import XCTest

/// Bad input to the scheduler's timer factories: `schedule`, `repeating`, `ticks`
/// (`Timers/TimerScheduler+Timers.swift`). `CONTRIBUTING.md` names these tests row by row against
/// the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class TimerFactoryBadInputTests: BadInputTestCase {
    func testScheduleAfterZeroOrNegativeDelayFiresAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        for delay in [Duration.zero, .nanoseconds(-1), .seconds(-1)] + hugelyNegative {
            let now = clock.now()
            let ticks = Recorder<Tick>()
            let timer = scheduler.schedule(after: delay) { ticks.append($0) }
            XCTAssertEqual(timer.deadline, now, "\(delay)")
            clock.advance(by: .zero)
            XCTAssertEqual(ticks.all.map(\.firedAt), [now], "\(delay)")
        }
    }

    func testScheduleAfterOverflowingDelayMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let toMax = Duration.nanoseconds(Int64.max - clock.now().nanoseconds)  // a deadline of exactly .max
        for delay in overflowing + [toMax] {
            let timer = scheduler.schedule(after: delay) { _ in XCTFail("a never deadline fired") }
            XCTAssertEqual(timer.deadline, .max, "\(delay)")
            assertNeverFiresAndCancels(timer, scheduler, clock)
        }
    }

    func testScheduleAtSaturatedDeadlineMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = scheduler.schedule(at: .max) { _ in XCTFail("a never deadline fired") }
        assertNeverFiresAndCancels(timer, scheduler, clock)
    }

    func testScheduleAtPastDeadlineFiresAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let ancient = scheduler.schedule(at: .min) { ticks.append($0) }
        let recent = scheduler.schedule(at: clock.now() - .seconds(1)) { ticks.append($0) }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.count, 2)
        let first = try XCTUnwrap(ticks.all.first { $0.deadline == .min })
        XCTAssertEqual(first.firedAt, clock.now())
        XCTAssertEqual(first.latenessNanoseconds, .max, "lateness in Int64 nanoseconds saturates")
        XCTAssertEqual(first.lateness, clock.now() - .min, "the Duration is exact")
        XCTAssertTrue(ancient.hasFired && recent.hasFired)
    }

    func testScheduleAfterSecondsOverflowMeansNeverAndNegativeFiresAtOnce() throws {
        let (scheduler, clock) = makeScheduler()
        for seconds: Double in [1e300, 9.2e9, .greatestFiniteMagnitude] {
            let timer = scheduler.schedule(afterSeconds: seconds) { _ in }
            XCTAssertEqual(timer.deadline, .max, "\(seconds) means never")
            timer.cancel()
        }
        for seconds: Double in [-1e300, -9.2e9, -.greatestFiniteMagnitude, -0.0, -1] {
            let timer = scheduler.schedule(afterSeconds: seconds) { _ in }
            XCTAssertEqual(timer.deadline, clock.now(), "\(seconds) fires as soon as possible")
        }
    }

    func testOneShotLeewayIsHonouredNotClamped() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = scheduler.schedule(after: .milliseconds(1), leeway: .seconds(1)) { ticks.append($0) }
        clock.advance(by: .seconds(5))
        XCTAssertEqual(ticks.all.map(\.firedAt), [timer.deadline + .seconds(1)],
                       "the virtual scheduler wakes as late as allowed: deadline + the whole leeway")
        for leeway in overflowing {
            let timer = scheduler.schedule(after: .milliseconds(1), leeway: leeway) { _ in }
            XCTAssertFalse(timer.isCancelled, "\(leeway)")
            timer.cancel()
        }
    }

    func testRepeatingOverflowingIntervalMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let toMax = Duration.nanoseconds(Int64.max - clock.now().nanoseconds)  // tick 0 due at .max
        for interval in overflowing + [toMax] {
            let timer = scheduler.repeating(every: interval) { _ in XCTFail("a never tick fired") }
            XCTAssertEqual(timer.nextDeadline, .max, "\(interval)")
            assertNeverFiresAndCancels(timer, scheduler, clock)
            let ticks = scheduler.ticks(every: interval)
            XCTAssertEqual(ticks.timer.nextDeadline, .max, "\(interval)")
            ticks.timer.cancel()
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testRepeatingIntervalUnderOneNanosecondRoundsUpToOne() throws {
        let (scheduler, _) = makeScheduler()
        let timer = scheduler.repeating(every: Duration(attoseconds: 1)) { _ in }
        XCTAssertEqual(timer.interval, .nanoseconds(1))
        let seconds = scheduler.repeating(everySeconds: 1e-12) { _ in }
        XCTAssertEqual(seconds.interval, .nanoseconds(1))
    }

    func testRepeatingLeewayNotUnderTheIntervalIsClampedToJustUnderIt() throws {
        let (scheduler, _) = makeScheduler()
        for leeway in [Duration.milliseconds(1), .seconds(5)] + overflowing {
            let timer = scheduler.repeating(every: .milliseconds(1), leeway: leeway) { _ in }
            XCTAssertEqual(timer.leeway, .milliseconds(1) - .nanoseconds(1), "\(leeway)")
        }
        XCTAssertEqual(scheduler.repeating(every: .nanoseconds(1), leeway: .seconds(1)) { _ in }.leeway, .zero)
    }

    /// A leeway as long as the interval would end each tick's window at the
    /// next tick's deadline: a wake-up there (the latest acceptable instant,
    /// where a virtual scheduler wakes) would serve two ticks, and a `.skip`
    /// timer would report every other one missed. Clamped just under it, every
    /// tick gets its own call.
    func testALeewayAsLongAsTheIntervalStillGivesEveryTickItsOwnCall() throws {
        for leeway in [Duration.milliseconds(10), .seconds(1)] {
            for policy in [MissedTickPolicy.skip, .burst] {
                let (scheduler, clock) = makeScheduler()
                let ticks = Recorder<Tick>()
                let timer = scheduler.repeating(every: .milliseconds(10), leeway: leeway, policy: policy) {
                    ticks.append($0)
                }
                clock.advance(by: .seconds(1))
                // Each fires at its latest instant: the last one, due at 1 s, has not yet.
                XCTAssertEqual(ticks.all.map(\.index), Array(0...98), "\(leeway) \(policy)")
                XCTAssertEqual(ticks.all.map(\.missed).reduce(0, +), 0, "\(leeway) \(policy)")
                withExtendedLifetime(timer) {}
            }
        }
    }

    func testRepeatingSaturatedStartMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: .max) { _ in XCTFail("fired") }
        assertNeverFiresAndCancels(timer, scheduler, clock)
        let ticks = try scheduler.ticks(every: .milliseconds(1), startingAt: .max)
        XCTAssertEqual(ticks.timer.nextDeadline, .max)
        ticks.timer.cancel()
    }

    func testRepeatingStartMoreThanTwoToTheSixtyTwoNanosecondsBackThrowsDeadlineOutOfRange() throws {
        let (scheduler, clock) = makeScheduler()
        let limit = clock.now() - .nanoseconds(Int64(1) << 62)
        for start in [Instant.min, limit - .nanoseconds(1)] {
            assertThrows(.deadlineOutOfRange, try scheduler.repeating(every: .seconds(1), startingAt: start) { _ in },
                         "\(start)")
            assertThrows(.deadlineOutOfRange, try scheduler.repeating(every: .seconds(1), startingAt: start,
                                                                      policy: .burst) { _ in })
        }
        // The limit itself is accepted: one fire, every tick since counted as missed.
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .seconds(1), startingAt: limit) { ticks.append($0) }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.missed), [4_611_686_018])
        withExtendedLifetime(timer) {}
    }

    func testRepeatingStartInThePastFiresAtOnceAndCountsTheMissedTicks() throws {
        let (scheduler, clock) = makeScheduler()
        let now = clock.now()
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: now - .milliseconds(10)) {
            ticks.append($0)
        }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.index), [10])
        XCTAssertEqual(ticks.all.map(\.missed), [10])
        XCTAssertEqual(ticks.all.map(\.deadline), [now])
        XCTAssertEqual(timer.nextDeadline, now + .milliseconds(1), "the grid is kept")
    }

    func testRepeatingEverySecondsOverflowMeansNever() {
        let (scheduler, _) = makeScheduler()
        for seconds: Double in [1e300, 9.2e9, .greatestFiniteMagnitude] {
            let timer = scheduler.repeating(everySeconds: seconds) { _ in }
            XCTAssertEqual(timer.nextDeadline, .max, "\(seconds) means never")
            timer.cancel()
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testWeakOwnerGoneBeforeTheFirstTickCancelsTheTimerWithoutACall() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        let calls = Recorder<Int>()
        var owner: Owner? = Owner(flag: flag)
        let timer = scheduler.repeating(every: .milliseconds(1), owner: owner!) { _, tick in
            calls.append(tick.index)
        }
        owner = nil
        XCTAssertTrue(flag.isSet, "the timer does not keep its owner")
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// The one-shot `owner:` form: its deadline comes with the owner gone, so
    /// the timer ends without a call, cancelled and not fired.
    func testWeakOwnerGoneBeforeItsDeadlineCancelsAOneShotWithoutACall() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        let calls = Recorder<Int>()
        var owner: Owner? = Owner(flag: flag)
        let timer = scheduler.schedule(after: .milliseconds(1), owner: owner!) { _, tick in
            calls.append(tick.index)
        }
        owner = nil
        XCTAssertTrue(flag.isSet, "the timer does not keep its owner")
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertFalse(timer.hasFired, "no handler call: not fired")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        timer.reschedule(after: .milliseconds(1))
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0, "a cancelled one-shot is not armed again")
    }

    func testCancelWhileATickWaitsOnItsQueueDropsTheTick() throws {
        let (scheduler, clock) = makeScheduler()
        let queue = DispatchQueue(label: "bad-input.delivery")
        let calls = Recorder<Int>()
        queue.suspend()
        let oneShot = scheduler.schedule(after: .milliseconds(1), delivery: .queue(queue)) { calls.append($0.index) }
        let repeating = scheduler.repeating(every: .milliseconds(1), delivery: .queue(queue)) {
            calls.append($0.index)
        }
        clock.advance(by: .milliseconds(1))  // both ticks are on the suspended queue now
        oneShot.cancel()
        repeating.cancel()
        queue.resume()
        queue.sync {}
        XCTAssertEqual(calls.count, 0, "a tick queued before the cancel is dropped")
    }

    func testCancellingTheTimerOfATickSequenceEndsTheSequence() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .all)
        await clock.advance(by: .milliseconds(3))
        sequence.timer.cancel()
        let indices = await withWatchdog {
            var seen: [Int] = []
            for await tick in sequence { seen.append(tick.index) }
            return seen
        }
        XCTAssertEqual(indices, [0, 1, 2], "the buffered ticks, then the end (nil: it hung)")

        let other = scheduler.ticks(every: .milliseconds(1), buffering: .all)
        await clock.advance(by: .milliseconds(3))
        let viaTick = await withWatchdog {
            var seen: [Int] = []
            for await tick in other {
                seen.append(tick.index)
                if seen.count == 1 { tick.cancelTimer() }
            }
            return seen
        }
        XCTAssertEqual(viaTick, [0, 1, 2], "a tick's cancelTimer() ends it too")
    }
}
