@testable import PrecisionTimer
import XCTest

/// Bad input to blocking waits, ``WaitStrategy`` and ``AdaptiveMargin``
/// (`Sources/PrecisionTimer/Waiting`). `CONTRIBUTING.md` names these tests row by row against the
/// tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class WaitBadInputTests: BadInputTestCase {
    let strategies: [WaitStrategy] = [.sleep, .spin, .hybrid(margin: .microseconds(20)), .adaptive]

    func testWaitUntilSaturatedDeadlineThrowsDeadlineOutOfRange() {
        let clock = PrecisionClock()
        for strategy in strategies {
            assertThrows(.deadlineOutOfRange, try clock.wait(until: .max, strategy: strategy), "\(strategy)")
            assertThrows(.deadlineOutOfRange, try clock.wait(until: clock.now + .seconds(Int64.max), strategy: strategy))
        }
    }

    func testWaitUntilPastDeadlineReturnsAtOnce() throws {
        let clock = PrecisionClock()
        for strategy in strategies {
            for deadline in [Instant.min, clock.now - .seconds(1)] {
                let result = try clock.wait(until: deadline, strategy: strategy)
                XCTAssertEqual(result.deadline, deadline)
                XCTAssertGreaterThanOrEqual(result.woke, deadline)
                XCTAssertGreaterThanOrEqual(result.latenessNanoseconds, 0)
            }
        }
    }

    func testWaitForZeroOrNegativeDurationReturnsAtOnce() throws {
        let clock = PrecisionClock()
        for duration in [Duration.zero, .nanoseconds(-1), .seconds(-5)] + hugelyNegative {
            let before = clock.now
            let result = try clock.wait(for: duration, strategy: .sleep)
            XCTAssertGreaterThanOrEqual(result.deadline, before, "\(duration)")
            XCTAssertLessThanOrEqual(result.deadline, result.woke, "\(duration)")
            XCTAssertLessThanOrEqual(result.woke, clock.now)
        }
    }

    func testWaitForOverflowingDurationThrowsDeadlineOutOfRange() {
        let clock = PrecisionClock()
        for duration in overflowing {
            assertThrows(.deadlineOutOfRange, try clock.wait(for: duration), "\(duration)")
        }
    }

    func testHybridMarginLongerThanTheWaitSpinsAndIsNeverEarly() throws {
        let clock = PrecisionClock()
        for margin in [Duration.seconds(10), .seconds(1e20)] {
            let result = try clock.wait(for: .milliseconds(1), strategy: .hybrid(margin: margin))
            XCTAssertGreaterThanOrEqual(result.woke, result.deadline)
        }
    }

    func testMonotonicRawSpinWaitWorks() throws {
        let raw = PrecisionClock.monotonicRaw
        let result = try raw.wait(for: .microseconds(50), strategy: .spin)
        XCTAssertGreaterThanOrEqual(result.woke, result.deadline)
    }

    func testAdaptiveMarginForNonsenseWaitLengthsStaysInBounds() {
        for length in [Duration.seconds(-1), .zero] + overflowing + hugelyNegative {
            XCTAssertTrue(AdaptiveMargin.bounds.contains(AdaptiveMargin.margin(forWaitOf: length)), "\(length)")
        }
    }
}
