import CMonoClock
import PrecisionTimer
import XCTest

final class WaitTests: XCTestCase {
    func testNoStrategyEverReturnsEarly() throws {
        let clock = PrecisionClock()
        let strategies: [WaitStrategy] = [.sleep, .spin, .hybrid(margin: .microseconds(100)), .hybrid(margin: .zero),
                                          .adaptive]
        for strategy in strategies {
            var deadline = clock.now
            for _ in 0..<50 {
                deadline += .microseconds(200)
                let result = try clock.wait(until: deadline, strategy: strategy)
                XCTAssertEqual(result.deadline, deadline)
                XCTAssertGreaterThanOrEqual(result.woke, deadline, "\(strategy) woke early")
                XCTAssertGreaterThanOrEqual(result.latenessNanoseconds, 0)
                XCTAssertGreaterThanOrEqual(clock.now, deadline)
                // Generous: a shared 2-core VM can stall for milliseconds.
                XCTAssertLessThan(result.lateness, .milliseconds(500))
            }
        }
    }

    func testEveryClockThatCanSleepWaits() throws {
        for source in [PrecisionClock.Source.monotonic, .boottime, .realtime] {
            let clock = PrecisionClock(source)
            let result = try clock.wait(for: .milliseconds(1))
            XCTAssertGreaterThanOrEqual(result.woke, result.deadline, "\(source)")
        }
    }

    func testPastDeadlinesReturnAtOnceAndNegativeDurationsClampToZero() throws {
        let clock = PrecisionClock()
        let past = clock.now - .seconds(1)
        for strategy in [WaitStrategy.sleep, .spin, .adaptive] {
            let result = try clock.wait(until: past, strategy: strategy)
            XCTAssertGreaterThanOrEqual(result.woke, past)
        }
        let start = clock.now
        try clock.wait(for: .seconds(-5))
        XCTAssertLessThan(clock.now - start, .seconds(1))
    }

    func testTheSleepStrategyRestoresTheThreadTimerSlack() throws {
        let before = ThreadControls.timerSlack()
        try PrecisionClock().wait(for: .microseconds(300), strategy: .sleep)
        XCTAssertEqual(ThreadControls.timerSlack(), before)
    }

    func testRawClockSpinsButCannotSleep() throws {
        let raw = PrecisionClock.monotonicRaw
        let deadline = raw.now + .microseconds(50)
        XCTAssertGreaterThanOrEqual(try raw.wait(until: deadline, strategy: .spin).woke, deadline)
        // A sleeping strategy on it is a precondition failure: PreconditionTrapTests.
    }

    func testBadDeadlinesAndMarginsThrowInsteadOfHanging() {
        let clock = PrecisionClock()
        XCTAssertThrowsError(try clock.wait(until: .max)) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .deadlineOutOfRange)
        }
        XCTAssertThrowsError(try clock.wait(until: clock.now + .seconds(Int64.max))) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .deadlineOutOfRange)
        }
        XCTAssertThrowsError(try clock.wait(for: .seconds(Int64.max))) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .deadlineOutOfRange)
        }
        // A negative hybrid margin is a precondition failure: PreconditionTrapTests.
    }

    func testAdaptiveMarginLearnsFromRealWaits() throws {
        AdaptiveMargin.reset()
        let initial = AdaptiveMargin.current
        let clock = PrecisionClock()
        for _ in 0..<64 {
            // Ahead of now each time: a deadline already past (after a stall)
            // would return without sleeping and teach nothing.
            let deadline = clock.now + .microseconds(500)
            let result = try clock.wait(until: deadline, strategy: .adaptive)
            XCTAssertGreaterThanOrEqual(result.woke, deadline)
        }
        let learned = AdaptiveMargin.current
        XCTAssertTrue(AdaptiveMargin.bounds.contains(learned))
        XCTAssertNotEqual(learned, initial, "64 waits must have replaced the initial margin with a learned one")
    }
}
