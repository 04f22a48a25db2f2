/// Percentiles of recent oversleep samples, recomputed every few samples: a high
/// one for the spin margin (``AdaptiveMargin``), a low one for the sleep's lead
/// (``SleepLead``). Not thread-safe by itself: the shared ones sit behind a lock,
/// the timer engine keeps its own on its thread.
///
/// Recording is cheap; the recompute (a sort of the window, up to
/// ``capacity`` samples) waits for the next read. Samples are recorded right
/// after a wake, when the waiter is due to return (or to spin the last
/// stretch); reads come before the next sleep, when there is time (the timer engine's thread
/// recomputes only once it has no tick to deliver and no job to run, see
/// ``isStale``).
struct OversleepEstimator: Sendable {
    /// Samples kept.
    static let capacity = 256
    /// Recompute the percentile after this many new samples.
    static let recomputeEvery = 16
    /// The percentile of oversleep the margin covers.
    static let quantile = 0.995
    /// Added to the percentile so the spin starts a little before the wake is due.
    static let headroom: Int64 = 2_000
    /// The margin used before anything is learned: generous, so early waits are
    /// precise, and it shrinks as samples arrive.
    static let initialMargin: Int64 = 200_000
    /// The percentile of oversleep the sleep's lead is set to.
    static let leadQuantile = 0.01
    /// Samples needed before a lead is used.
    static let leadMinimumSamples = 64

    private var samples: [Int64]
    private var count = 0
    private var next = 0
    private var sinceRecompute = 0
    /// Set when ``recomputeEvery`` samples have arrived since the last recompute.
    private var stale = false
    /// The samples as of the last recompute, sorted, and their prefix sums
    /// (`prefix[k]` is the sum of the `k` smallest).
    private var sorted: [Int64] = []
    private var prefix: [Int64] = [0]
    private var storedMargin: Int64
    private var storedLead: Int64 = 0

    init() {
        samples = [Int64](repeating: 0, count: Self.capacity)
        storedMargin = Self.initialMargin
    }

    /// The percentile margin (headroom added, clamped to the bounds).
    var margin: Int64 {
        mutating get { refresh(); return storedMargin }
    }

    /// The low percentile of oversleep (zero until enough samples), clamped to
    /// ``SleepLead/bounds``.
    var lead: Int64 {
        mutating get { refresh(); return storedLead }
    }

    static var floor: Int64 { AdaptiveMargin.bounds.lowerBound.saturatingNanoseconds }
    static var ceiling: Int64 { AdaptiveMargin.bounds.upperBound.saturatingNanoseconds }

    /// Records one oversleep (negative values, which the kernel never produces,
    /// count as zero).
    mutating func record(_ oversleep: Int64) {
        samples[next] = Swift.max(0, oversleep)
        next = (next + 1) % Self.capacity
        count = Swift.min(count + 1, Self.capacity)
        sinceRecompute += 1
        if sinceRecompute >= Self.recomputeEvery {
            sinceRecompute = 0
            stale = true
        }
    }

    /// Whether enough samples arrived since the last recompute that the next
    /// read recomputes the percentiles.
    var isStale: Bool { stale }

    /// Recomputes the percentiles if enough samples arrived since the last time.
    mutating func refresh() {
        guard stale else { return }
        stale = false
        sorted = samples[0..<count].sorted()
        prefix.removeAll(keepingCapacity: true)
        prefix.append(0)
        for x in sorted { prefix.append(prefix[prefix.count - 1].saturatingAdd(x)) }
        storedMargin = Swift.min(Swift.max(sortedPercentile.saturatingAdd(Self.headroom), Self.floor), Self.ceiling)
        storedLead = sorted.count < Self.leadMinimumSamples ? 0
            : Swift.min(sortedLowPercentile, SleepLead.bounds.upperBound.saturatingNanoseconds)
    }

    /// The chosen percentile of the samples as of the last recompute.
    var percentile: Int64 {
        mutating get { refresh(); return sortedPercentile }
    }

    /// The lead's percentile of the samples as of the last recompute (rounded
    /// down, so of 256 samples the third smallest).
    var lowPercentile: Int64 {
        mutating get { refresh(); return sortedLowPercentile }
    }

    private var sortedPercentile: Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(sorted.count - 1) * Self.quantile).rounded(.up))
        return sorted[Swift.min(rank, sorted.count - 1)]
    }

    private var sortedLowPercentile: Int64 {
        guard !sorted.isEmpty else { return 0 }
        return sorted[Int((Double(sorted.count - 1) * Self.leadQuantile).rounded(.down))]
    }

    /// The margin for a wait of `length` ns: the percentile margin, but no larger
    /// than the margin whose expected spin over the recent samples is
    /// ``AdaptiveMargin/spinBudget`` of the wait; never under the floor.
    mutating func margin(forWaitOf length: Int64) -> Int64 {
        refresh()
        let budget = Double(Swift.max(0, length)) * AdaptiveMargin.spinBudget
        let n = sorted.count
        guard n > 0 else {
            return Swift.max(Self.floor, Swift.min(storedMargin, Int64(budget)))
        }
        // The expected spin of margin m is f(m) = (k·m − prefix[k]) / n where k
        // samples lie below m: increasing and piecewise linear. Find where it
        // reaches the budget.
        var affordable = Int64.max
        for k in 1...n {
            let m = (Double(n) * budget + Double(prefix[k])) / Double(k)
            if k == n || m <= Double(sorted[k]) {
                affordable = m >= 9.0e18 ? .max : Int64(m)
                break
            }
        }
        return Swift.max(Self.floor, Swift.min(storedMargin, affordable))
    }
}
