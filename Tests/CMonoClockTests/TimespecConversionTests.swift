import CMonoClock
import XCTest

/// `cmc_timespec_to_ns` with any timespec, however far out of range: the result is tv_sec × 10⁹ + tv_nsec computed exactly,
/// saturated at INT64_MIN / INT64_MAX, and never signed overflow in C.
final class TimespecConversionTests: XCTestCase {
    /// The exact value, saturated: what the C conversion must return.
    static func expected(_ sec: Int, _ nsec: Int) -> Int64 {
        let exact = Int128(sec) * 1_000_000_000 + Int128(nsec)
        return Int64(clamping: exact)
    }

    static let extremes: [Int] = [
        .max, .max - 1, .min, .min + 1, 0, 1, -1,
        9_223_372_036, 9_223_372_037, -9_223_372_036, -9_223_372_037,  // around INT64 / 1e9
        999_999_999, 1_000_000_000, 1_000_000_001, -1_000_000_000, -1_000_000_001,
        2_000_000_000, -2_000_000_000, 854_775_807, 854_775_808, -854_775_808, -854_775_809,
        145_224_192, 145_224_193, -145_224_193, Int.max / 2, Int.min / 2,
    ]

    func testExtremeTimespecsConvertExactlyOrSaturate() {
        var mismatches: [String] = []
        for sec in Self.extremes {
            for nsec in Self.extremes {
                let got = cmc_timespec_to_ns(timespec(tv_sec: sec, tv_nsec: nsec))
                let want = Self.expected(sec, nsec)
                if got != want { mismatches.append("(\(sec), \(nsec)) -> \(got), expected \(want)") }
            }
        }
        XCTAssertEqual(mismatches, [], "\(mismatches.count) of \(Self.extremes.count * Self.extremes.count)")
    }

    func testTheCasesNamedInTheIssue() {
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .max, tv_nsec: 0)), .max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .min, tv_nsec: 0)), .min)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 1, tv_nsec: -1)), 999_999_999)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 0, tv_nsec: -1_000_000_001)), -1_000_000_001)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 1, tv_nsec: 2_000_000_000)), 3_000_000_000)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 0, tv_nsec: .max)), .max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .max, tv_nsec: 1_000_000_000)), .max,
                       "tv_sec = Int.max with a tv_nsec carry")
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .max, tv_nsec: 2_000_000_000)), .max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .max, tv_nsec: .max)), .max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .min, tv_nsec: -1)), .min)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: .min, tv_nsec: .min)), .min)
        // In range although tv_sec × 1e9 alone is not.
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 9_223_372_037, tv_nsec: -.max)), 145_224_193)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: -9_223_372_037, tv_nsec: 145_224_193)), .min + 1)
        // The ends of the range exactly.
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 9_223_372_036, tv_nsec: 854_775_807)), .max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: -9_223_372_037, tv_nsec: 145_224_192)), .min)
    }

    func testFromNanosecondsRoundTrips() {
        for ns: Int64 in [.min, .min + 1, -1_000_000_001, -1, 0, 1, 999_999_999, 1_000_000_000, .max - 1, .max] {
            let ts = cmc_timespec_from_ns(ns)
            XCTAssertTrue((0..<1_000_000_000).contains(ts.tv_nsec), "\(ns)")
            XCTAssertEqual(cmc_timespec_to_ns(ts), ns)
        }
    }
}
