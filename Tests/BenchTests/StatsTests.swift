import Foundation
import Histogram
import XCTest
@testable import BenchSupport

final class StatsTests: XCTestCase {
    /// Uniform 1…100,000 ns: percentile p is p × 1,000 ns (within HdrHistogram's 3 digits).
    func testPercentilesOfAUniformDistribution() {
        var acc = LatenessAccumulator()
        for v in 1...100_000 { acc.add(Int64(v), missedAbove: .max) }
        let s = acc.summary
        XCTAssertEqual(acc.samples, 100_000)
        XCTAssertEqual(s.min, 1)
        XCTAssertEqual(s.max, 100_000)
        XCTAssertTrue(abs(s.mean - 50_000.5) < 0.01)
        for (value, expected) in [(s.p50, 50_000.0), (s.p90, 90_000.0), (s.p99, 99_000.0), (s.p999, 99_900.0)] {
            XCTAssertTrue(abs(Double(value) - expected) / expected < 0.002, "\(value) vs \(expected)")
        }
    }

    func testEarlyAndMissedAreCounted() {
        var acc = LatenessAccumulator()
        for v: Int64 in [-5, 10, 2_000_000, 300] { acc.add(v, missedAbove: 1_000_000) }
        acc.addSkipped(3)
        XCTAssertEqual(acc.early, 1)
        XCTAssertEqual(acc.missed, 4)
        XCTAssertEqual(acc.summary.min, -5)
    }

    /// An exponential distribution with mean 10 µs: CDF point p is −ln(1 − p) × 10 µs.
    func testCdfPointsFollowAKnownDistribution() {
        var acc = LatenessAccumulator()
        let n = 200_000
        for i in 0..<n {
            let u = (Double(i) + 0.5) / Double(n)  // deterministic quantiles
            acc.add(Int64((-log(1 - u) * 10_000).rounded()), missedAbove: .max)
        }
        let cdf = acc.cdf
        XCTAssertEqual(cdf.first?.percentile, 0)
        XCTAssertEqual(cdf.last?.percentile, 100)
        XCTAssertEqual(cdf.last?.valueNs, acc.summary.max)
        // Monotonic in both coordinates.
        for (a, b) in zip(cdf, cdf.dropFirst()) {
            XCTAssertTrue(a.percentile < b.percentile)
            XCTAssertTrue(a.valueNs <= b.valueNs)
        }
        for point in cdf where point.percentile > 0 && point.percentile <= 99.9 {
            let expected = -log(1 - point.percentile / 100) * 10_000
            XCTAssertTrue(abs(Double(point.valueNs) - expected) <= Swift.max(2, expected * 0.01),
                    "p\(point.percentile): \(point.valueNs) vs \(expected)")
        }
    }

    func testLogBinsAndSliceMeans() {
        let bins = Distribution.logBins([50, 100, 150, 1_000, 9_999, 10_000, 1_000_000_000],
                                        lowNs: 100, highNs: 100_000, perDecade: 1)
        XCTAssertEqual(bins, [3, 2, 2])  // below-low into the first bin, above-high into the last
        XCTAssertEqual(Distribution.binEdge(2, lowNs: 100, perDecade: 1), 10_000)
        let means = Distribution.sliceMeans((0..<100).map { Int64($0) }, parts: 10)
        XCTAssertEqual(means.count, 10)
        XCTAssertEqual(means.first, 4.5)
        XCTAssertEqual(means.last, 94.5)
    }

    func testFormatting() {
        XCTAssertEqual(Fmt.duration(812.0), "812 ns")
        XCTAssertEqual(Fmt.duration(12_400.0), "12.4 µs")
        XCTAssertEqual(Fmt.duration(1_020_000.0), "1.02 ms")
        XCTAssertEqual(Fmt.ratio(0.31), "0.31×")
        XCTAssertEqual(Fmt.count(1_234_567), "1,234,567")
    }
}
