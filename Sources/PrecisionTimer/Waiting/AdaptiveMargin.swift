import Synchronization

/// The spin margin learned from this machine's kernel wake-up lateness.
///
/// Every sleeping phase of an ``WaitStrategy/adaptive`` wait reports how late the
/// kernel woke it (its oversleep). The margin is the 99th percentile of the most
/// recent ``OversleepEstimator/capacity`` samples plus ``OversleepEstimator/headroom``,
/// clamped to ``bounds``: the wait spins only as long as this machine needs.
///
/// One wait spins at most ``spinBudget`` of its own length, however bad the
/// machine's tail: on a VM whose kernel wake-ups are late by milliseconds now and
/// then, a 1 ms wait spins at most 100 µs and accepts the rare late wake rather
/// than burning the core.
public enum AdaptiveMargin {
    /// The range the learned margin is clamped to: at least 2 µs, at most 2 ms.
    public static let bounds: ClosedRange<Duration> = .microseconds(2) ... .milliseconds(2)

    /// The largest share of a wait's length that may be spent spinning: 1/10.
    public static let spinBudget = 0.1

    static let shared = Mutex(OversleepEstimator())

    /// The margin adaptive waits currently use.
    public static var current: Duration {
        .nanoseconds(shared.withLock { $0.margin })
    }

    /// Forgets what was learned (for tests and benchmarks).
    public static func reset() {
        shared.withLock { $0 = OversleepEstimator() }
    }
}

/// A high percentile of recent oversleep samples, recomputed every few samples.
/// Not thread-safe by itself: the shared one sits behind a `Mutex`, the timer
/// engine keeps its own on its thread.
struct OversleepEstimator: Sendable {
    /// Samples kept.
    static let capacity = 128
    /// Recompute the percentile after this many new samples.
    static let recomputeEvery = 16
    /// The percentile of oversleep the margin covers.
    static let quantile = 0.99
    /// Added to the percentile so the spin starts a little before the wake is due.
    static let headroom: Int64 = 2_000
    /// The margin used before anything is learned: generous, so early waits are
    /// precise, and it shrinks as samples arrive.
    static let initialMargin: Int64 = 200_000

    private var samples: [Int64]
    private var count = 0
    private var next = 0
    private var sinceRecompute = 0
    private(set) var margin: Int64

    init() {
        samples = [Int64](repeating: 0, count: Self.capacity)
        margin = Self.initialMargin
    }

    /// The margin for a wait of `length` ns: the learned margin, but spinning at
    /// most ``AdaptiveMargin/spinBudget`` of the wait (and never under the floor).
    func margin(forWaitOf length: Int64) -> Int64 {
        let budget = Int64(Double(Swift.max(0, length)) * AdaptiveMargin.spinBudget)
        return Swift.min(margin, Swift.max(Self.floor, budget))
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
            recompute()
        }
    }

    /// The chosen percentile of the samples held now.
    var percentile: Int64 {
        guard count > 0 else { return 0 }
        let sorted = samples[0..<count].sorted()
        let rank = Int((Double(count - 1) * Self.quantile).rounded(.up))
        return sorted[Swift.min(rank, count - 1)]
    }

    private mutating func recompute() {
        let m = percentile.saturatingAdd(Self.headroom)
        margin = Swift.min(Swift.max(m, Self.floor), Self.ceiling)
    }
}
