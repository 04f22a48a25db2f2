/// A distribution of durations (how late timers fired, how long handlers ran)
/// in the bucket layout of an HdrHistogram with two significant digits.
///
/// - **Range:** 0 to 2^36 − 1 ns (about 68.7 s). A larger value is counted
///   as that highest value; ``max`` stays exact. A negative value counts as 0.
/// - **Precision:** every value below 256 ns has a bucket of its own; above,
///   each power of two is split into 128 buckets, so a percentile is within
///   0.8 % of the value recorded (the highest value its bucket holds, as
///   HdrHistogram reports it, never above ``max``).
/// - **Cost:** ``record(_:)`` is a few instructions and no allocation after
///   the first (the buckets, 30 KiB, are allocated then).
///
/// Its percentiles match hdrhistogram-swift's (lowest 1, highest 2^36 − 1,
/// two digits) for the same values; the tests check it. It is written out
/// here so that the library depends on no histogram package.
public struct LatencyHistogram: Sendable, Hashable {
    /// The highest value the buckets tell apart: 2^36 − 1 ns.
    public static let highestTrackable = Duration.nanoseconds(highestTrackableNanoseconds)

    static let highestTrackableNanoseconds: Int64 = (1 << 36) - 1
    /// Buckets per power of two above 256 ns (2^7), and the 256 exact ones below.
    static let subBucketHalfCountMagnitude = 7
    static let subBucketMask: UInt64 = (1 << (subBucketHalfCountMagnitude + 1)) - 1
    static let bucketCount = index(of: UInt64(highestTrackableNanoseconds)) + 1

    /// The counts per bucket; empty until the first value.
    private(set) var counts: [UInt64] = []
    /// Values recorded.
    public private(set) var count = 0
    /// The sum of the values recorded, exact: 2^64 ns is only 584 years, and
    /// values above the buckets' range count in full.
    private var total: UInt128 = 0
    private var minimum: Int64 = .max
    private var maximum: Int64 = 0

    /// An empty histogram.
    public init() {}

    /// The bucket of `value` (at most the highest trackable value).
    @inline(__always)
    static func index(of value: UInt64) -> Int {
        let bucket = (63 - (value | subBucketMask).leadingZeroBitCount) - subBucketHalfCountMagnitude
        return (bucket << subBucketHalfCountMagnitude) + Int(truncatingIfNeeded: value >> UInt64(bucket))
    }

    /// The highest value bucket `index` holds.
    static func highestValue(atIndex index: Int) -> Int64 {
        let bucket = Swift.max(0, (index >> subBucketHalfCountMagnitude) - 1)
        let sub = Int64(index - (bucket << subBucketHalfCountMagnitude))
        return (sub << Int64(bucket)) + (Int64(1) << Int64(bucket)) - 1
    }

    /// Records one value, in nanoseconds.
    @inline(__always)
    public mutating func record(nanoseconds: Int64) {
        let value = Swift.max(0, nanoseconds)
        if _slowPath(counts.isEmpty) { counts = [UInt64](repeating: 0, count: Self.bucketCount) }
        let clamped = Swift.min(value, Self.highestTrackableNanoseconds)
        counts[Self.index(of: UInt64(clamped))] &+= 1
        count &+= 1
        total &+= UInt128(UInt64(value))
        if value > maximum { maximum = value }
        if value < minimum { minimum = value }
    }

    /// Records one value.
    public mutating func record(_ duration: Duration) {
        record(nanoseconds: duration.saturatingNanoseconds)
    }

    /// The largest value recorded, exactly (zero when empty).
    public var max: Duration { .nanoseconds(maximum) }
    /// The smallest value recorded, exactly (zero when empty).
    public var min: Duration { .nanoseconds(count == 0 ? 0 : minimum) }
    /// The mean of the values recorded, from their exact sum, rounded down to a
    /// whole nanosecond (zero when empty).
    public var mean: Duration { count == 0 ? .zero : .nanoseconds(Int64(total / UInt128(count))) }

    /// The value at or below which `percentile` % of the values lie, within the
    /// histogram's precision: 0 is the smallest value, 100 the largest, and a
    /// percentile outside 0 … 100 is clamped to it. Zero when empty.
    /// - Precondition: `percentile` is a number (not NaN).
    public func percentile(_ percentile: Double) -> Duration {
        requirePrecondition(!percentile.isNaN, "LatencyHistogram.percentile(_:)", "the percentile is NaN")
        return .nanoseconds(nanoseconds(atPercentile: percentile))
    }

    func nanoseconds(atPercentile percentile: Double) -> Int64 {
        guard count > 0 else { return 0 }
        guard percentile > 0 else { return minimum }
        guard percentile < 100 else { return maximum }
        let wanted = Swift.max(1, UInt64((percentile.nextDown * Double(count) / 100).rounded(.up)))
        var seen: UInt64 = 0
        for (index, n) in counts.enumerated() where n > 0 {
            seen &+= n
            if seen >= wanted {
                return Swift.max(Swift.min(Self.highestValue(atIndex: index), maximum), minimum)
            }
        }
        return maximum
    }

    /// The figures most asked for, computed in one pass each.
    public var summary: LatencySummary {
        LatencySummary(count: count, p50: percentile(50), p90: percentile(90), p99: percentile(99),
                       p999: percentile(99.9), max: max, mean: mean)
    }

    /// Empties the histogram, keeping its buckets allocated.
    public mutating func reset() {
        if !counts.isEmpty { counts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        count = 0
        total = 0
        minimum = .max
        maximum = 0
    }

    /// Whether the two hold the same record: the same count, sum, min and max,
    /// and the same count in every bucket. Whether the buckets are allocated
    /// does not count: a histogram emptied by ``reset()`` equals a new one.
    public static func == (lhs: LatencyHistogram, rhs: LatencyHistogram) -> Bool {
        guard lhs.count == rhs.count, lhs.total == rhs.total, lhs.minimum == rhs.minimum,
              lhs.maximum == rhs.maximum else { return false }
        guard !lhs.counts.isEmpty, !rhs.counts.isEmpty else {
            return lhs.counts.allSatisfy { $0 == 0 } && rhs.counts.allSatisfy { $0 == 0 }
        }
        return lhs.counts == rhs.counts
    }

    /// Hashes what ``==(_:_:)`` compares: the buckets that hold values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(total)
        hasher.combine(minimum)
        hasher.combine(maximum)
        for (index, n) in counts.enumerated() where n > 0 {
            hasher.combine(index)
            hasher.combine(n)
        }
    }

    /// Adds the values of `other` to this histogram.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        if counts.isEmpty { counts = [UInt64](repeating: 0, count: Self.bucketCount) }
        for (index, n) in other.counts.enumerated() where n > 0 { counts[index] &+= n }
        count &+= other.count
        total &+= other.total
        maximum = Swift.max(maximum, other.maximum)
        minimum = Swift.min(minimum, other.minimum)
    }

    /// The values recorded since `earlier`, a copy of this histogram taken
    /// before (an exporter's period). Its max and min are those of the buckets
    /// (the exact ones are not known for a difference); a histogram that was
    /// reset since `earlier` is returned whole.
    package func subtracting(_ earlier: LatencyHistogram) -> LatencyHistogram {
        guard earlier.count > 0 else { return self }
        guard earlier.count <= count, earlier.counts.count == counts.count else { return self }
        var result = LatencyHistogram()
        result.counts = [UInt64](repeating: 0, count: Self.bucketCount)
        for index in counts.indices {
            guard counts[index] >= earlier.counts[index] else { return self }
            let n = counts[index] - earlier.counts[index]
            guard n > 0 else { continue }
            result.counts[index] = n
            result.count &+= Int(n)
            let value = Self.highestValue(atIndex: index)
            result.maximum = Swift.max(result.maximum, Swift.min(value, maximum))
            result.minimum = Swift.min(result.minimum, value)
        }
        result.total = total &- earlier.total
        return result
    }

    /// Calls `body` with each bucket that holds values: the highest value it
    /// holds (at most ``max``), in nanoseconds, and how many.
    package func forEachBucket(_ body: (_ nanoseconds: Int64, _ count: Int) throws -> Void) rethrows {
        for (index, n) in counts.enumerated() where n > 0 {
            try body(Swift.min(Self.highestValue(atIndex: index), maximum), Int(n))
        }
    }
}

/// A histogram's figures at one moment.
public struct LatencySummary: Sendable, Hashable, CustomStringConvertible {
    /// Values recorded.
    public var count: Int
    /// The median.
    public var p50: Duration
    /// The 90th percentile.
    public var p90: Duration
    /// The 99th percentile.
    public var p99: Duration
    /// The 99.9th percentile.
    public var p999: Duration
    /// The largest value, exactly.
    public var max: Duration
    /// The mean, from the exact sum of the values, rounded down to a whole
    /// nanosecond.
    public var mean: Duration

    /// `n=… p50=… p90=… p99=… p99.9=… max=…`, durations in readable units.
    public var description: String {
        "n=\(count) p50=\(p50.readable) p90=\(p90.readable) p99=\(p99.readable) "
            + "p99.9=\(p999.readable) max=\(max.readable)"
    }
}
