import Foundation
import PrecisionTimer
import XCTest

/// `PrecisionClock.Instant` ⇄ `Date` for realtime instants (ns since 1970).
final class PrecisionClockDateTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    func testTheEpochsConvertExactly() {
        XCTAssertEqual(Instant(nanoseconds: 0).date, Date(timeIntervalSince1970: 0))
        XCTAssertEqual(Instant(nanoseconds: 0).date.timeIntervalSinceReferenceDate, -978_307_200)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: 0)), Instant(nanoseconds: 0))
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: 0)), Instant(nanoseconds: 978_307_200_000_000_000))
        XCTAssertEqual(Instant(nanoseconds: 978_307_200_000_000_000).date, Date(timeIntervalSinceReferenceDate: 0))
        XCTAssertEqual(Date(Instant(nanoseconds: 1_500_000_000)), Date(timeIntervalSince1970: 1.5))
    }

    func testInstantsBefore1970() {
        XCTAssertEqual(Instant(nanoseconds: -1_500_000_000).date.timeIntervalSince1970, -1.5)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: -1.5)), Instant(nanoseconds: -1_500_000_000))
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: -978_307_200.25)),
                       Instant(nanoseconds: -250_000_000))
        // 1900-01-01 00:00:00 UTC.
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: -2_208_988_800)),
                       Instant(nanoseconds: -2_208_988_800_000_000_000))
    }

    func testSubMicrosecondRoundingOfTheDouble() {
        let ref: Int64 = 978_307_200_000_000_000
        // Near 2001 a Date's Double resolves far below a nanosecond: rounding to nearest.
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: 1.4e-9)).nanoseconds, ref + 1)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: 1.6e-9)).nanoseconds, ref + 2)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: -1.4e-9)).nanoseconds, ref - 1)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: -1.6e-9)).nanoseconds, ref - 2)
        XCTAssertEqual(Instant(nanoseconds: ref + 1).date.timeIntervalSinceReferenceDate, 1e-9)
        // In 2023 the Double's step is 2^-23 s (119 ns): the nearest Double, then back.
        let instant = Instant(nanoseconds: 1_700_000_000_123_456_789)
        XCTAssertEqual(instant.date.timeIntervalSinceReferenceDate, 6_053_997_996_658_031 / 8_388_608)
        XCTAssertEqual(Instant(instant.date).nanoseconds, 1_700_000_000_123_456_836, "within 60 ns")
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: 721_692_800.125)).nanoseconds,
                       1_700_000_000_125_000_000)
    }

    func testOutOfRangeDatesSaturate() {
        XCTAssertEqual(Instant(Date.distantFuture), .max)
        XCTAssertEqual(Instant(Date.distantPast), .min)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: 9_223_372_036)).nanoseconds, 9_223_372_036_000_000_000)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: 9_223_372_037)), .max)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: -9_223_372_036)).nanoseconds, -9_223_372_036_000_000_000)
        XCTAssertEqual(Instant(Date(timeIntervalSince1970: -9_223_372_037)), .min)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: .infinity)), .max)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: -.infinity)), .min)
        XCTAssertEqual(Instant(Date(timeIntervalSinceReferenceDate: .nan)), .min, "NaN: already past")
        XCTAssertEqual(Instant.max.date.timeIntervalSince1970, 9_223_372_036.854_775_807, accuracy: 1e-5)
        XCTAssertEqual(Instant.min.date.timeIntervalSince1970, -9_223_372_036.854_775_808, accuracy: 1e-5)
    }

    func testTheRealtimeClockAgreesWithDate() {
        let before = Date()
        let now = PrecisionClock.realtime.now
        let after = Date()
        XCTAssertGreaterThanOrEqual(now.date.timeIntervalSince(before), -0.001)
        XCTAssertLessThanOrEqual(now.date.timeIntervalSince(after), 0.001)
    }
}
