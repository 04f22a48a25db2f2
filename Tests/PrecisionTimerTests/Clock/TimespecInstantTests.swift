import PrecisionTimer
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `PrecisionClock.Instant(timespec)` with out-of-range timespecs: exact when the value fits, saturating when it does not.
final class TimespecInstantTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    func testOutOfRangeTimespecsSaturateOrConvertExactly() {
        XCTAssertEqual(Instant(timespec(tv_sec: .max, tv_nsec: 0)), .max)
        XCTAssertEqual(Instant(timespec(tv_sec: .min, tv_nsec: 0)), .min)
        XCTAssertEqual(Instant(timespec(tv_sec: .max, tv_nsec: 2_000_000_000)), .max)
        XCTAssertEqual(Instant(timespec(tv_sec: .max, tv_nsec: .max)), .max)
        XCTAssertEqual(Instant(timespec(tv_sec: .min, tv_nsec: -1)), .min)
        XCTAssertEqual(Instant(timespec(tv_sec: .min, tv_nsec: -1_000_000_001)), .min)
        XCTAssertEqual(Instant(timespec(tv_sec: 0, tv_nsec: -1)).nanoseconds, -1)
        XCTAssertEqual(Instant(timespec(tv_sec: 2, tv_nsec: -1_000_000_001)).nanoseconds, 999_999_999)
        XCTAssertEqual(Instant(timespec(tv_sec: 0, tv_nsec: .max)).nanoseconds, .max)
        XCTAssertEqual(Instant(timespec(tv_sec: 9_223_372_037, tv_nsec: .min)).nanoseconds, 145_224_192)
    }
}
