@testable import PrecisionTimer
import XCTest

/// `Duration.saturatingNanoseconds` takes a 64-bit path for delays up to
/// 2^73 attoseconds and the exact 128-bit one beyond: both must give the
/// nanoseconds rounded up, clamped to `Int64`.
final class DurationNanosecondsTests: XCTestCase {
    /// The definition, in 128 bits: rounded toward positive infinity, clamped.
    private static func reference(_ d: Duration) -> Int64 {
        let a = d.attoseconds
        var ns = a / 1_000_000_000
        if a % 1_000_000_000 > 0 { ns += 1 }
        return Int64(clamping: ns)
    }

    func testEdgesOfThe64BitPath() {
        let limit = Int128(1) << 73
        var cases: [Int128] = [0, 1, 511, 512, 513, 999_999_999, 1_000_000_000, 1_000_000_001,
                               1_953_125 << 9, (1_953_125 << 9) + 1, limit - 1, limit, limit + 1,
                               -1, -999_999_999, -1_000_000_000, -1_000_000_001,
                               Int128(Int64.max) * 1_000_000_000, Int128(Int64.max) * 1_000_000_000 + 1,
                               Int128.max, Int128.min]
        for k in [Int128(1), 60, 3_600, 9_444] {
            let whole = k * 1_000_000_000_000_000_000
            cases += [whole - 1, whole, whole + 1]
        }
        for a in cases {
            let d = Duration(attoseconds: a)
            XCTAssertEqual(d.saturatingNanoseconds, Self.reference(d), "attoseconds \(a)")
        }
        XCTAssertEqual(Duration.seconds(60).saturatingNanoseconds, 60_000_000_000)
        XCTAssertEqual(Duration(attoseconds: 1).saturatingNanoseconds, 1)
        XCTAssertEqual(Duration(attoseconds: -1).saturatingNanoseconds, 0)
    }

    func testRandomDurationsAgreeWithThe128BitDefinition() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200_000 {
            // Magnitudes spread over every bit length, both signs.
            let bits = Int.random(in: 0...126, using: &generator)
            let word = Int128(UInt64.random(in: 0...UInt64.max, using: &generator))
            let magnitude = (word << max(0, bits - 63)) >> max(0, 63 - bits)
            let a = Bool.random(using: &generator) ? magnitude : -magnitude
            let d = Duration(attoseconds: a)
            XCTAssertEqual(d.saturatingNanoseconds, Self.reference(d), "attoseconds \(a)")
        }
    }
}
