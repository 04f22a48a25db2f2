import Dispatch
import Foundation
@testable import PrecisionTimer
import XCTest

/// Bad input to PrecisionClock, its instants and their conversions
/// (`Sources/PrecisionTimer/Clock`). `CONTRIBUTING.md` names these tests row by row against the
/// tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class ClockBadInputTests: BadInputTestCase {
    func testInstantArithmeticSaturatesAtMinAndMax() {
        XCTAssertEqual(Instant(nanoseconds: .max - 5) + .nanoseconds(10), .max)
        XCTAssertEqual(Instant(nanoseconds: .min + 5) - .nanoseconds(10), .min)
        XCTAssertEqual(Instant.max + .seconds(Int64.max), .max)
        XCTAssertEqual(Instant.min + .seconds(Int64.min), .min)
        XCTAssertEqual(Instant.min - .seconds(Int64.max), .min)
        XCTAssertEqual(Instant.max - .seconds(Int64.min), .max)
        var later = Instant.max
        later += .nanoseconds(1)
        XCTAssertEqual(later, .max)
        var earlier = Instant.min
        earlier -= .nanoseconds(1)
        XCTAssertEqual(earlier, .min)
        // Sub-nanosecond parts keep rounding so a deadline is never early.
        XCTAssertEqual(Instant(nanoseconds: 0) + Duration(attoseconds: 1), Instant(nanoseconds: 1))
        XCTAssertEqual(Instant(nanoseconds: 0) - Duration(attoseconds: 1), Instant(nanoseconds: 0))
        XCTAssertEqual(Instant(nanoseconds: 0) - Duration(attoseconds: -1), Instant(nanoseconds: 1))
    }

    func testDurationsBeyondInt64SecondsSaturateInsteadOfTrapping() {
        let origin = Instant(nanoseconds: 0)
        for duration in overflowing {
            XCTAssertEqual(origin + duration, .max, "\(duration)")
            XCTAssertLessThanOrEqual(origin - duration, Instant(nanoseconds: -Int64.max), "\(duration)")
            XCTAssertEqual(Int64(duration.timespec.tv_sec), Int64.max / 1_000_000_000, "\(duration)")
        }
        for duration in hugelyNegative {
            XCTAssertEqual(origin + duration, .min, "\(duration)")
            XCTAssertEqual(origin - duration, .max, "\(duration): negating it would trap")
        }
    }

    func testInstantDifferenceAcrossTheWholeRangeIsExact() {
        let span = Instant.max - Instant.min
        XCTAssertEqual(span.attoseconds, Int128(UInt64.max) * 1_000_000_000)
        XCTAssertEqual((Instant.min - Instant.max).attoseconds, -Int128(UInt64.max) * 1_000_000_000)
        XCTAssertEqual(Instant.min.duration(to: .max), span)
    }

    func testInstantFromTimespecNormalisesAndSaturates() {
        XCTAssertEqual(Instant(timespec(tv_sec: 1, tv_nsec: 1_500_000_000)).nanoseconds, 2_500_000_000)
        XCTAssertEqual(Instant(timespec(tv_sec: 1, tv_nsec: -1)).nanoseconds, 999_999_999)
        XCTAssertEqual(Instant(timespec(tv_sec: .max, tv_nsec: 0)), .max)
        XCTAssertEqual(Instant(timespec(tv_sec: .min, tv_nsec: 0)), .min)
    }

    func testDurationTimespecClampsToInt64Nanoseconds() {
        let high = Duration.seconds(Int64.max).timespec
        XCTAssertEqual(high.tv_sec, 9_223_372_036)
        XCTAssertEqual(high.tv_nsec, 854_775_807)
        let low = Duration.seconds(Int64.min).timespec
        XCTAssertEqual(low.tv_sec, -9_223_372_037)
        XCTAssertEqual(low.tv_nsec, 145_224_192, "normalised: tv_nsec in 0..<1e9")
        let tiny = Duration(attoseconds: 1).timespec
        XCTAssertEqual(tiny.tv_sec, 0)
        XCTAssertEqual(tiny.tv_nsec, 1, "rounded up")
    }

    func testDispatchTimeConversionsClamp() {
        XCTAssertEqual(Instant(DispatchTime.distantFuture), .max)
        XCTAssertEqual(Instant.max.dispatchTime, .distantFuture)
        for ns: Int64 in [.min, -5, 0] {
            XCTAssertEqual(Instant(nanoseconds: ns).dispatchTime.uptimeNanoseconds, 1,
                           "an instant before boot is the earliest DispatchTime")
        }
    }

    func testDispatchWallTimeAtOrBeforeTheEpochIsLongPastNotDistantFuture() {
        XCTAssertEqual(Instant.max.dispatchWallTime, .distantFuture)
        XCTAssertEqual(Instant(DispatchWallTime.distantFuture), .max)
        for ns: Int64 in [.min, -1_000_000_000, 0, 1, 2] {
            let wall = Instant(nanoseconds: ns).dispatchWallTime
            XCTAssertNotEqual(wall, .distantFuture, "\(ns) ns")
            XCTAssertEqual(Instant(wall).nanoseconds, 3, "\(ns) ns clamps to the earliest wall time")
        }
        XCTAssertEqual(Instant(Instant(nanoseconds: 1_000).dispatchWallTime).nanoseconds, 1_000)
        let fired = expectation(description: "a pre-1970 wall deadline is long past")
        DispatchQueue.global().asyncAfter(wallDeadline: Instant(nanoseconds: -1).dispatchWallTime) {
            fired.fulfill()
        }
        wait(for: [fired], timeout: 10)
    }

    func testInstantDescriptionOfTheExtremes() {
        XCTAssertEqual(Instant.max.description, "9223372036.854775807s")
        XCTAssertEqual(Instant.min.description, "-9223372037.145224192s")
    }
}
