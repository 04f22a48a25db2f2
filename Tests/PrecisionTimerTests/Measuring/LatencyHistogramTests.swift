import Histogram
import PrecisionTimer
import XCTest

/// LatencyHistogram keeps HdrHistogram's layout: its percentiles are
/// hdrhistogram-swift's for the same values, to the nanosecond.
final class LatencyHistogramTests: XCTestCase {
    /// hdrhistogram-swift set up as LatencyHistogram documents itself.
    func reference() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: (1 << 36) - 1,
                          numberOfSignificantValueDigits: .two)
    }

    let percentiles: [Double] = [0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100]

    func assertMatches(_ values: [Int64], _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        var mine = LatencyHistogram()
        var theirs = reference()
        for v in values {
            mine.record(nanoseconds: v)
            theirs.record(UInt64(v))
        }
        XCTAssertEqual(mine.count, values.count, label, file: file, line: line)
        for p in percentiles {
            XCTAssertEqual(mine.percentile(p), .nanoseconds(Int64(theirs.valueAtPercentile(p))),
                           "\(label): p\(p)", file: file, line: line)
        }
        XCTAssertEqual(mine.max, .nanoseconds(values.max() ?? 0), label, file: file, line: line)
        XCTAssertEqual(mine.min, .nanoseconds(values.min() ?? 0), label, file: file, line: line)
    }

    func testPercentilesMatchHdrHistogramSwiftOnManyDistributions() {
        var rng = SplitMix64(seed: 0x5eed)
        // Uniform over small values (exact buckets), a log-uniform spread over
        // the whole range, a lateness-like shape (a body of hundreds of ns and a
        // tail of milliseconds), and a single repeated value.
        assertMatches((0..<10_000).map { _ in Int64(rng.next() % 256) }, "uniform 0..255")
        assertMatches((0..<50_000).map { _ in
            let bits = Int64(rng.next() % 36)
            return Int64(1 << bits) + Int64(rng.next() % UInt64(1 << bits))
        }.map { Swift.min($0, (1 << 36) - 1) }, "log-uniform")
        assertMatches((0..<20_000).map { i in
            i % 100 == 0 ? 1_000_000 + Int64(rng.next() % 4_000_000) : 80 + Int64(rng.next() % 900)
        }, "body and tail")
        assertMatches([Int64](repeating: 123_456, count: 1_000), "one value")
        assertMatches([7], "a single value")
    }

    func testPercentileIsWithinItsPrecisionOfTheValue() {
        // Every value above 256 ns lands in a bucket at most 1/128 of it wide.
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let v = Int64(rng.next() % ((1 << 36) - 1))
            var h = LatencyHistogram()
            h.record(nanoseconds: v)
            h.record(nanoseconds: (1 << 36) - 1)  // so p50 is v's bucket, not the max
            let p = h.percentile(50).saturatingNanosecondsForTests
            XCTAssertGreaterThanOrEqual(p, v)
            XCTAssertLessThanOrEqual(Double(p - v), Swift.max(0, Double(v) / 128), "value \(v) read as \(p)")
        }
    }

    func testEdgesClampAndReportExactly() {
        var h = LatencyHistogram()
        XCTAssertEqual(h.count, 0)
        XCTAssertEqual(h.percentile(50), .zero)
        XCTAssertEqual(h.max, .zero)
        XCTAssertEqual(h.mean, .zero)
        h.record(nanoseconds: -5)  // a negative value counts as zero
        XCTAssertEqual(h.min, .zero)
        h.record(nanoseconds: Int64.max)  // beyond the range: the top bucket; max exact
        XCTAssertEqual(h.max, .nanoseconds(Int64.max))
        XCTAssertEqual(h.percentile(100), .nanoseconds(Int64.max))
        XCTAssertEqual(h.percentile(99), LatencyHistogram.highestTrackable,
                       "p99 of two values is the larger's bucket: the top one")
        XCTAssertEqual(h.percentile(-3), .zero, "clamped to p0")
        XCTAssertEqual(h.percentile(250), .nanoseconds(Int64.max), "clamped to p100")
        h.reset()
        XCTAssertEqual(h.count, 0)
        XCTAssertEqual(h.percentile(99), .zero)
        h.record(.microseconds(3))
        XCTAssertEqual(h.summary.count, 1)
        XCTAssertEqual(h.summary.max, .microseconds(3))
        XCTAssertEqual(h.mean, .microseconds(3))
    }

    /// The mean comes from the exact sum of the values, even past 2^64 ns in
    /// all (values beyond the buckets' range count in full).
    func testTheMeanStaysExactPastASumOf2To64Nanoseconds() {
        var h = LatencyHistogram()
        for _ in 0..<3 { h.record(nanoseconds: Int64.max) }
        XCTAssertEqual(h.mean, .nanoseconds(Int64.max))
        h.record(nanoseconds: 0)
        XCTAssertEqual(h.mean, .nanoseconds(Int64.max / 4 * 3 + 2), "3 × (2^63 − 1) / 4, rounded down")
        var small = LatencyHistogram()
        small.record(nanoseconds: 1)
        small.record(nanoseconds: 2)
        XCTAssertEqual(small.mean, .nanoseconds(1), "1.5 ns, rounded down")
    }

    /// Equality and hashing follow what was recorded, not whether the buckets
    /// are allocated: a reset histogram equals a new one, and one that records
    /// the same values after its reset equals one that recorded only them.
    func testAResetHistogramEqualsANewOne() {
        var h = LatencyHistogram()
        h.record(.microseconds(3))
        XCTAssertNotEqual(h, LatencyHistogram())
        h.reset()
        XCTAssertEqual(h, LatencyHistogram())
        XCTAssertEqual(h.hashValue, LatencyHistogram().hashValue)
        XCTAssertEqual(Set([h, LatencyHistogram()]).count, 1)
        h.record(.microseconds(5))
        var fresh = LatencyHistogram()
        fresh.record(.microseconds(5))
        XCTAssertEqual(h, fresh)
        XCTAssertEqual(h.hashValue, fresh.hashValue)
        fresh.record(.microseconds(5))
        XCTAssertNotEqual(h, fresh)
        // Same count, sum, min and max; different buckets.
        var a = LatencyHistogram(), b = LatencyHistogram()
        [100, 300, 500].forEach { a.record(nanoseconds: $0) }
        [100, 400, 400, 500].forEach { b.record(nanoseconds: $0) }
        a.record(nanoseconds: 400)
        a.reset()
        b.reset()
        [100, 200, 400, 500].forEach { a.record(nanoseconds: $0) }
        [100, 300, 300, 500].forEach { b.record(nanoseconds: $0) }
        XCTAssertEqual(a.count, b.count)
        XCTAssertEqual(a.mean, b.mean)
        XCTAssertEqual(a.max, b.max)
        XCTAssertNotEqual(a, b)
    }

    func testMergeEqualsRecordingEverythingInOne() {
        var rng = SplitMix64(seed: 7)
        let a = (0..<5_000).map { _ in Int64(rng.next() % 10_000_000) }
        let b = (0..<3_000).map { _ in Int64(rng.next() % 1_000) }
        var ha = LatencyHistogram(), hb = LatencyHistogram(), all = LatencyHistogram()
        a.forEach { ha.record(nanoseconds: $0); all.record(nanoseconds: $0) }
        b.forEach { hb.record(nanoseconds: $0); all.record(nanoseconds: $0) }
        ha.merge(hb)
        XCTAssertEqual(ha, all)
        XCTAssertEqual(ha.summary, all.summary)
    }

    func testSubtractingGivesWhatWasRecordedSince() {
        var h = LatencyHistogram()
        for v in [100, 200, 300] as [Int64] { h.record(nanoseconds: v) }
        let earlier = h
        for v in [5_000, 6_000] as [Int64] { h.record(nanoseconds: v) }
        let since = h.subtracting(earlier)
        XCTAssertEqual(since.count, 2)
        var buckets: [(Int64, Int)] = []
        since.forEachBucket { buckets.append(($0, $1)) }
        XCTAssertEqual(buckets.map(\.1), [1, 1])
        XCTAssertEqual(buckets.map(\.0), [5_023, 6_000],
                       "each bucket's highest value (32 ns wide at 4–8 µs), at most the max")
        // A reset in between: the figures since are the whole histogram.
        h.reset()
        h.record(nanoseconds: 42)
        XCTAssertEqual(h.subtracting(earlier).count, 1)
    }
}

extension Duration {
    var saturatingNanosecondsForTests: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }
}

