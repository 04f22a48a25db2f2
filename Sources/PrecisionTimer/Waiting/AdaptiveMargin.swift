import Synchronization

/// The spin margin learned from this machine's kernel wake-up lateness.
///
/// Every sleeping phase of an ``WaitStrategy/adaptive`` wait reports how late the
/// kernel woke it (its oversleep). The margin is the 99.5th percentile of the most
/// recent 256 samples plus a 2 µs headroom (recomputed every 16 samples; 200 µs
/// before anything is learned), clamped to ``bounds``: the wait spins only as
/// long as this machine needs.
///
/// The margin is also bounded by cost: a wait's expected spin (the mean over the
/// recent samples of `margin − oversleep` where positive) is at most
/// ``spinBudget`` of the wait's length. On a VM whose kernel wake-ups are late
/// by milliseconds now and then, a 1 ms wait therefore spins about 50 µs on
/// average and accepts the rare late wake rather than burning the core; on a
/// quiet machine the percentile is usually the smaller bound.
/// The timer engine's thread learns its own margin the same way.
public enum AdaptiveMargin {
    /// The range the learned margin is clamped to: at least 2 µs, at most 2 ms.
    public static let bounds: ClosedRange<Duration> = .microseconds(2) ... .milliseconds(2)

    /// The largest share of a wait's length its expected spin may take: 5 %.
    public static let spinBudget = 0.05

    static let shared = Locked(OversleepEstimator())

    /// The percentile margin adaptive waits have learned (before the per-wait
    /// spin budget).
    public static var current: Duration {
        .nanoseconds(shared.withLock { $0.margin })
    }

    /// The margin an adaptive wait of `length` would use now.
    public static func margin(forWaitOf length: Duration) -> Duration {
        .nanoseconds(shared.withLock { $0.margin(forWaitOf: length.saturatingNanoseconds) })
    }

    /// Forgets what was learned (for tests and benchmarks).
    package static func reset() {
        shared.withLock { $0 = OversleepEstimator() }
    }
}
