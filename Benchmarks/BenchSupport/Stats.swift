//===----------------------------------------------------------------------===//
// Lateness statistics (HdrHistogram plus exact min / max / mean) and the
// number formatting the tables use.
//===----------------------------------------------------------------------===//
import Foundation
import Histogram

/// Accumulates one contender's lateness samples over all rounds.
///
/// Samples arrive as raw signed nanoseconds (collected in a pre-sized buffer in
/// the measured loop) and are folded in here between rounds: negative values
/// (early wakes) are counted and recorded as 0; values above the interval count
/// as missed ticks.
struct LatenessAccumulator {
    private(set) var histogram: Histogram<UInt64>
    private(set) var early = 0
    private(set) var missed = 0
    private(set) var samples = 0
    private(set) var min = Int64.max
    private(set) var max = Int64.min
    private var sum: Double = 0

    init() {
        // 1 ns .. 60 s at three significant digits; grows if ever needed.
        histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000,
                                      numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
    }

    /// Folds in a batch of signed samples. A sample above `missedAbove` counts
    /// as a missed tick.
    mutating func add(_ batch: UnsafeBufferPointer<Int64>, missedAbove: Int64) {
        for value in batch {
            add(value, missedAbove: missedAbove)
        }
    }

    mutating func add(_ value: Int64, missedAbove: Int64) {
        samples += 1
        if value < 0 { early += 1 }
        if value > missedAbove { missed += 1 }
        min = Swift.min(min, value)
        max = Swift.max(max, value)
        sum += Double(value)
        _ = histogram.record(UInt64(Swift.max(0, value)))
    }

    /// Ticks that never got a call of their own (coalesced by the timer).
    mutating func addSkipped(_ count: Int) {
        missed += count
    }

    /// The lateness CDF, read from the histogram.
    var cdf: [CDFPoint] {
        samples > 0 ? Distribution.cdf(histogram, max: Swift.max(0, max)) : []
    }

    var summary: LatencySummary {
        guard samples > 0 else { return LatencySummary() }
        return LatencySummary(
            min: min,
            p50: Int64(histogram.valueAtPercentile(50)),
            p90: Int64(histogram.valueAtPercentile(90)),
            p99: Int64(histogram.valueAtPercentile(99)),
            p999: Int64(histogram.valueAtPercentile(99.9)),
            max: max,
            mean: sum / Double(samples))
    }
}

/// Lateness percentiles in nanoseconds (JSON `lateness_ns`).
struct LatencySummary: Codable, Sendable {
    var min: Int64 = 0
    var p50: Int64 = 0
    var p90: Int64 = 0
    var p99: Int64 = 0
    var p999: Int64 = 0
    var max: Int64 = 0
    var mean: Double = 0
}

// MARK: - Formatting

enum Fmt {
    /// A duration in nanoseconds with a unit chosen by magnitude: `812 ns`,
    /// `12.4 µs`, `1.02 ms`, `3.10 s`.
    static func duration(_ ns: Double) -> String {
        let sign = ns < 0 ? "-" : ""
        let a = abs(ns)
        if a < 1_000 { return sign + fixed(a, a < 10 ? 1 : 0) + " ns" }
        if a < 1_000_000 { return sign + significant(a / 1_000) + " µs" }
        if a < 1_000_000_000 { return sign + significant(a / 1_000_000) + " ms" }
        return sign + significant(a / 1_000_000_000) + " s"
    }

    static func duration(_ ns: Int64) -> String { duration(Double(ns)) }

    /// Three significant figures for values in 1 ..< 1000.
    static func significant(_ v: Double) -> String {
        if v < 10 { return fixed(v, 2) }
        if v < 100 { return fixed(v, 1) }
        return fixed(v, 0)
    }

    /// `v` with `digits` decimals (no Foundation formatting needed).
    static func fixed(_ v: Double, _ digits: Int) -> String {
        guard v.isFinite else { return v.isNaN ? "nan" : (v < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(v) * scale).rounded()
        let intPart = Int64(scaled / scale)
        var text = String(intPart)
        if digits > 0 {
            let frac = Int64(scaled - Double(intPart) * scale)
            let f = String(frac)
            text += "." + String(repeating: "0", count: digits - f.count) + f
        }
        return (v < 0 && scaled != 0 ? "-" : "") + text
    }

    /// A ratio such as `0.31×`.
    static func ratio(_ v: Double) -> String {
        guard v.isFinite else { return "–" }
        if v > 0 && v < 0.1 {
            // Two significant figures for small ratios: 0.0024×.
            var digits = 2
            var x = v
            while x < 0.1 && digits < 8 { x *= 10; digits += 1 }
            return fixed(v, digits) + "×"
        }
        return fixed(v, v < 10 ? 2 : 1) + "×"
    }

    /// A count with thousands separators: `1,234,567`.
    static func count<T: BinaryInteger>(_ v: T) -> String {
        let s = String(v.magnitude)
        var out = ""
        for (i, ch) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return (v < 0 ? "-" : "") + out
    }

    /// A rate such as `1.23 M/s`.
    static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1_000_000 { return significant(perSecond / 1_000_000) + " M/s" }
        if perSecond >= 1_000 { return significant(perSecond / 1_000) + " k/s" }
        return fixed(perSecond, 1) + " /s"
    }

    static func percent(_ fraction: Double) -> String {
        fixed(fraction * 100, 2) + " %"
    }
}

/// A plain text table with aligned columns (first column left, the rest right).
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: [String]) {
        self.header = header
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    func render(indent: String = "  ") -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (i, cell) in row.enumerated() where i < widths.count {
                widths[i] = Swift.max(widths[i], cell.count)
            }
        }
        func line(_ row: [String]) -> String {
            var parts: [String] = []
            for (i, cell) in row.enumerated() where i < widths.count {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                parts.append(i == 0 ? cell + pad : pad + cell)
            }
            return indent + parts.joined(separator: "  ")
        }
        var out = [line(header)]
        out.append(indent + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        out += rows.map(line)
        return out.joined(separator: "\n")
    }
}

// MARK: - Distributions for the plots

/// One point of a lateness CDF: `fraction` of the samples were at most `valueNs`.
struct CDFPoint: Codable, Sendable, Equatable {
    var percentile: Double
    var valueNs: Int64
}

enum Distribution {
    /// The percentiles a CDF is drawn through: dense in the body, denser in
    /// the tail (where timers differ).
    static let cdfPercentiles: [Double] = {
        var p: [Double] = [0]
        for i in 1...99 { p.append(Double(i)) }
        for i in 1...9 { p.append(99 + Double(i) / 10) }
        for i in 1...9 { p.append(99.9 + Double(i) / 100) }
        p.append(100)
        return p
    }()

    /// CDF points read from an HdrHistogram (no sorting of the samples).
    static func cdf(_ histogram: Histogram<UInt64>, max: Int64,
                    percentiles: [Double] = cdfPercentiles) -> [CDFPoint] {
        guard histogram.totalCount > 0 else { return [] }
        return percentiles.map { p in
            let v = p >= 100 ? max : Int64(histogram.valueAtPercentile(p))
            return CDFPoint(percentile: p, valueNs: Swift.min(v, max))
        }
    }

    /// Counts of `samples` in logarithmic bins: `perDecade` bins per factor of
    /// ten from `lowNs` to `highNs`; values below `lowNs` go to the first bin,
    /// values above `highNs` to the last.
    static func logBins(_ samples: [Int64], lowNs: Double = 100, highNs: Double = 100_000_000,
                        perDecade: Int = 5) -> [Int] {
        let decades = log10(highNs / lowNs)
        let count = Swift.max(1, Int((decades * Double(perDecade)).rounded()))
        var bins = [Int](repeating: 0, count: count)
        for s in samples {
            let v = Swift.max(Double(s), lowNs)
            let i = Int(log10(v / lowNs) * Double(perDecade))
            bins[Swift.min(count - 1, Swift.max(0, i))] += 1
        }
        return bins
    }

    /// The lower edge (ns) of log bin `i`.
    static func binEdge(_ i: Int, lowNs: Double = 100, perDecade: Int = 5) -> Double {
        lowNs * pow(10, Double(i) / Double(perDecade))
    }

    /// Means of `samples` over `parts` consecutive, equal slices (in time order).
    static func sliceMeans(_ samples: [Int64], parts: Int = 10) -> [Double] {
        guard !samples.isEmpty, parts > 0 else { return [] }
        var out: [Double] = []
        for i in 0..<parts {
            let lo = samples.count * i / parts
            let hi = samples.count * (i + 1) / parts
            guard hi > lo else { out.append(.nan); continue }
            var sum = 0.0
            for j in lo..<hi { sum += Double(samples[j]) }
            out.append(sum / Double(hi - lo))
        }
        return out
    }
}
