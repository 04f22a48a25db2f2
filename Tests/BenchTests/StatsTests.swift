import Foundation
import Histogram
import Testing
@testable import BenchSupport

@Suite struct StatsTests {
    /// Uniform 1…100,000 ns: percentile p is p × 1,000 ns (within HdrHistogram's 3 digits).
    @Test func percentilesOfAUniformDistribution() {
        var acc = LatenessAccumulator()
        for v in 1...100_000 { acc.add(Int64(v), missedAbove: .max) }
        let s = acc.summary
        #expect(acc.samples == 100_000)
        #expect(s.min == 1)
        #expect(s.max == 100_000)
        #expect(abs(s.mean - 50_000.5) < 0.01)
        for (value, expected) in [(s.p50, 50_000.0), (s.p90, 90_000.0), (s.p99, 99_000.0), (s.p999, 99_900.0)] {
            #expect(abs(Double(value) - expected) / expected < 0.002, "\(value) vs \(expected)")
        }
    }

    @Test func earlyAndMissedAreCounted() {
        var acc = LatenessAccumulator()
        for v: Int64 in [-5, 10, 2_000_000, 300] { acc.add(v, missedAbove: 1_000_000) }
        acc.addSkipped(3)
        #expect(acc.early == 1)
        #expect(acc.missed == 4)
        #expect(acc.summary.min == -5)
    }

    /// An exponential distribution with mean 10 µs: CDF point p is −ln(1 − p) × 10 µs.
    @Test func cdfPointsFollowAKnownDistribution() {
        var acc = LatenessAccumulator()
        let n = 200_000
        for i in 0..<n {
            let u = (Double(i) + 0.5) / Double(n)  // deterministic quantiles
            acc.add(Int64((-log(1 - u) * 10_000).rounded()), missedAbove: .max)
        }
        let cdf = acc.cdf
        #expect(cdf.first?.percentile == 0)
        #expect(cdf.last?.percentile == 100)
        #expect(cdf.last?.valueNs == acc.summary.max)
        // Monotonic in both coordinates.
        for (a, b) in zip(cdf, cdf.dropFirst()) {
            #expect(a.percentile < b.percentile)
            #expect(a.valueNs <= b.valueNs)
        }
        for point in cdf where point.percentile > 0 && point.percentile <= 99.9 {
            let expected = -log(1 - point.percentile / 100) * 10_000
            #expect(abs(Double(point.valueNs) - expected) <= Swift.max(2, expected * 0.01),
                    "p\(point.percentile): \(point.valueNs) vs \(expected)")
        }
    }

    @Test func logBinsAndSliceMeans() {
        let bins = Distribution.logBins([50, 100, 150, 1_000, 9_999, 10_000, 1_000_000_000],
                                        lowNs: 100, highNs: 100_000, perDecade: 1)
        #expect(bins == [3, 2, 2])  // below-low into the first bin, above-high into the last
        #expect(Distribution.binEdge(2, lowNs: 100, perDecade: 1) == 10_000)
        let means = Distribution.sliceMeans((0..<100).map { Int64($0) }, parts: 10)
        #expect(means.count == 10)
        #expect(means.first == 4.5)
        #expect(means.last == 94.5)
    }

    @Test func formatting() {
        #expect(Fmt.duration(812.0) == "812 ns")
        #expect(Fmt.duration(12_400.0) == "12.4 µs")
        #expect(Fmt.duration(1_020_000.0) == "1.02 ms")
        #expect(Fmt.ratio(0.31) == "0.31×")
        #expect(Fmt.count(1_234_567) == "1,234,567")
    }
}
