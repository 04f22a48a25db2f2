import PrecisionTimer
import XCTest

/// ``ReadableDuration``: `Duration.readable` prints as a person writes.
final class ReadableDurationTests: XCTestCase {
    private func assertReads(_ duration: Duration, _ expected: String, file: StaticString = #filePath,
                             line: UInt = #line) {
        XCTAssertEqual(duration.readable.description, expected, "\(duration)", file: file, line: line)
        XCTAssertEqual("\(duration.readable)", expected, file: file, line: line)
    }

    func testNanosecondsAndTheMicrosecondBoundary() {
        assertReads(.nanoseconds(20), "20 ns")
        assertReads(.nanoseconds(1), "1 ns")
        assertReads(.nanoseconds(999), "999 ns")
        assertReads(.nanoseconds(1_000), "1 µs")
        assertReads(.nanoseconds(1_300), "1.3 µs")
        assertReads(.nanoseconds(1_234), "1.23 µs")
        assertReads(.nanoseconds(1_235), "1.24 µs")  // half away from zero
        assertReads(.nanoseconds(9_994), "9.99 µs")
        assertReads(.nanoseconds(9_995), "10 µs")  // rounds up a digit: still three significant
        assertReads(.nanoseconds(99_950), "100 µs")
        XCTAssertEqual("\(Duration.microseconds(1).readable)".unicodeScalars.map(\.value), [0x31, 0x20, 0xB5, 0x73],
                       "µ is U+00B5 MICRO SIGN")
    }

    func testMillisecondsAndSecondsAndTheirBoundaries() {
        assertReads(.nanoseconds(999_499), "999 µs")
        assertReads(.nanoseconds(999_500), "1 ms")  // 999.5 µs rounds to 1,000 µs: the next unit
        assertReads(.microseconds(2_980), "2.98 ms")
        assertReads(.nanoseconds(2_984_999), "2.98 ms")
        assertReads(.nanoseconds(2_985_000), "2.99 ms")
        assertReads(.microseconds(16_667), "16.7 ms")
        assertReads(.nanoseconds(999_499_999), "999 ms")
        assertReads(.nanoseconds(999_500_000), "1 s")
        assertReads(.milliseconds(1_500), "1.5 s")
        assertReads(.milliseconds(12_345), "12.3 s")
        assertReads(.milliseconds(999_499), "999 s")
        assertReads(.milliseconds(999_500), "1000 s")
        assertReads(.milliseconds(1_234_500), "1235 s")  // whole seconds are never dropped
        assertReads(.seconds(86_400), "86400 s")
    }

    func testZeroNegativesAndBelowANanosecond() {
        assertReads(.zero, "0 ns")
        assertReads(.nanoseconds(-20), "-20 ns")
        assertReads(.microseconds(-1_500), "-1.5 ms")
        assertReads(.nanoseconds(-999_500), "-1 ms")
        assertReads(.seconds(-2), "-2 s")
        assertReads(Duration(attoseconds: 250_000_000), "0.25 ns")
        assertReads(Duration(attoseconds: 500_000), "0.001 ns")
        assertReads(Duration(attoseconds: 499_999), "0 ns")
        assertReads(Duration(attoseconds: -1), "0 ns")  // rounds to zero: no sign
        assertReads(Duration(attoseconds: 999_500_000), "1 ns")
        assertReads(Duration(attoseconds: 1_500_000_000), "1.5 ns")
    }

    func testExtremeDurationsPrintWithoutTrappingOrExponents() {
        assertReads(.seconds(Int64.max), "9223372036854775807 s")
        assertReads(.seconds(Int64.min), "-9223372036854775808 s")
        assertReads(.nanoseconds(Int64.max), "9223372037 s")
        assertReads(Duration(attoseconds: .max), "170141183460469231732 s")
        assertReads(Duration(attoseconds: .min), "-170141183460469231732 s")
    }

    func testValueSemantics() {
        XCTAssertEqual(Duration.seconds(1).readable, ReadableDuration(.seconds(1)))
        XCTAssertEqual(ReadableDuration(.milliseconds(3)).duration, .milliseconds(3))
        XCTAssertEqual(Set([Duration.seconds(1).readable, .init(.milliseconds(1_000))]).count, 1)
    }
}
