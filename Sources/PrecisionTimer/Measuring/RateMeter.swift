import DequeModule

/// Measures the rate of events (frames, messages) over a sliding window, and the
/// spread of the intervals between them: an FPS meter for any event stream.
///
/// ``record(at:)`` is O(1) amortized (one clock read, one append, evictions of
/// what left the window), cheap enough for every frame at 1 kHz; ``statistics``
/// walks and sorts the window's intervals (for the percentiles), O(n log n).
/// A value type: keep it on one thread or behind a `Mutex`.
///
/// Two views of the window:
/// - ``statistics`` and ``rate``: the window ends at the newest event. A source
///   that stops keeps reading the rate it last had.
/// - ``statistics(asOf:)`` and ``rate(asOf:)``: the window ends at the instant
///   you give (usually `clock.now`), so a source that stalls reads as stalled:
///   its rate falls as the silence grows and is 0 once fewer than two of its
///   events are left in the window.
public struct RateMeter: Sendable {
    /// What the window holds.
    public struct Statistics: Sendable, Hashable {
        /// Events in the window.
        public var count: Int
        /// Events per second over the window (0 with fewer than two events). For
        /// ``RateMeter/statistics``: the intervals in the window divided by the
        /// time they span. For ``RateMeter/statistics(asOf:)``: the same, except
        /// that once the silence since the newest event is longer than the
        /// longest interval in the window, the time they span runs on to the
        /// instant asked about (the source is overdue: it reads as slowing down).
        public var rate: Double
        /// The shortest interval between consecutive events (zero with fewer than
        /// two events).
        public var minInterval: Duration
        /// The longest interval between consecutive events.
        public var maxInterval: Duration
        /// The mean interval between consecutive events, from their exact sum,
        /// rounded to the nearest nanosecond.
        public var meanInterval: Duration
        /// The standard deviation of the intervals (over all of them, not a
        /// sample's estimate), rounded to the nearest nanosecond: zero when
        /// every interval is the same.
        public var jitter: Duration
        /// The median interval: the 50th percentile by nearest rank (the
        /// smallest interval with at least half of the intervals at or below
        /// it; always an interval that occurred, never interpolated).
        public var p50Interval: Duration
        /// The 99th percentile of the intervals, by nearest rank (the smallest
        /// interval with at least 99 % of the intervals at or below it). With
        /// fewer than 100 intervals this is ``maxInterval``.
        public var p99Interval: Duration

        /// The figures of an empty window (all zero).
        static func empty(count: Int) -> Statistics {
            Statistics(count: count, rate: 0, minInterval: .zero, maxInterval: .zero, meanInterval: .zero,
                       jitter: .zero, p50Interval: .zero, p99Interval: .zero)
        }
    }

    /// The window's default length: one second.
    public static let defaultWindow: Duration = .seconds(1)

    /// How far back the meter looks.
    public let window: Duration
    /// The clock `record()` reads.
    public let clock: PrecisionClock
    private let windowNanoseconds: Int64
    private var stamps: Deque<Int64> = []

    /// A meter over the last second (``defaultWindow``) on `clock`. Never fails.
    public init(clock: PrecisionClock = .monotonic) {
        self.window = Self.defaultWindow
        self.clock = clock
        self.windowNanoseconds = Self.defaultWindow.saturatingNanoseconds
    }

    /// A meter over `window` on `clock`. A window longer than `Int64`
    /// nanoseconds (292 years) is clamped to it.
    ///
    /// A window is a duration the program chooses, as an interval is: a window
    /// read from a setting is the caller's to check (`window > .zero`) first.
    /// - Precondition: `window` is positive.
    public init(window: Duration, clock: PrecisionClock = .monotonic) {
        requirePrecondition(window > .zero, #function, "the window must be positive (got \(window))")
        self.window = window
        self.clock = clock
        self.windowNanoseconds = window.saturatingNanoseconds
    }

    /// Records one event at `instant` (default: now). Events must come in time
    /// order; an event earlier than the newest is recorded at the newest's time
    /// (a documented clamp: an interval is never negative). Any instant is
    /// accepted.
    public mutating func record(at instant: PrecisionClock.Instant? = nil) {
        var t = (instant ?? clock.now).nanoseconds
        if let last = stamps.last, t < last { t = last }
        stamps.append(t)
        let oldest = t.saturatingSubtract(windowNanoseconds)
        while let first = stamps.first, first < oldest {
            stamps.removeFirst()
        }
    }

    /// Forgets every event.
    public mutating func reset() {
        stamps.removeAll(keepingCapacity: true)
    }

    /// The window's figures, the window ending at the newest event: a source
    /// that stopped keeps its last rate here; see ``statistics(asOf:)``.
    public var statistics: Statistics {
        Self.statistics(of: stamps[...], end: nil)
    }

    /// The events per second of ``statistics``, without the interval figures
    /// (O(1)).
    public var rate: Double {
        guard stamps.count >= 2, let first = stamps.first, let last = stamps.last, last > first else { return 0 }
        return Double(stamps.count - 1) / Double(last.saturatingSubtract(first)) * 1e9
    }

    /// The window's figures as of `now`: the window is `now − window ... now`,
    /// and the events older than its start are left out (they are dropped from
    /// memory at the next ``record(at:)``), so a source that stalled reads as
    /// stalled. The interval figures are those of the intervals between the
    /// events left in the window; ``Statistics/rate`` also counts the silence
    /// since the newest event once it is longer than the longest of them.
    ///
    /// `now` is normally `clock.now` (or, for a meter fed frame timestamps, the
    /// current instant of the frames' clock). An instant earlier than the newest
    /// event is read as the newest event's instant: then this is ``statistics``.
    public func statistics(asOf now: PrecisionClock.Instant) -> Statistics {
        let (events, end) = window(asOf: now)
        return Self.statistics(of: events, end: end)
    }

    /// The events per second of ``statistics(asOf:)``, without the interval
    /// figures (one pass, no sort).
    public func rate(asOf now: PrecisionClock.Instant) -> Double {
        let (events, end) = window(asOf: now)
        guard events.count >= 2, let first = events.first, var last = events.last else { return 0 }
        var longest: Int64 = 0
        var previous = first
        for t in events.dropFirst() {
            longest = Swift.max(longest, t.saturatingSubtract(previous))
            previous = t
        }
        if end.saturatingSubtract(last) > longest { last = end }
        return last > first ? Double(events.count - 1) / Double(last.saturatingSubtract(first)) * 1e9 : 0
    }

    /// The events at or after `now − window`, and `now` (at least the newest).
    private func window(asOf now: PrecisionClock.Instant) -> (Deque<Int64>.SubSequence, Int64) {
        let end = Swift.max(now.nanoseconds, stamps.last ?? .min)
        let oldest = end.saturatingSubtract(windowNanoseconds)
        // The stamps are sorted: binary search for the first one in the window.
        var lo = stamps.startIndex
        var hi = stamps.endIndex
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if stamps[mid] < oldest { lo = mid + 1 } else { hi = mid }
        }
        return (stamps[lo...], end)
    }

    /// The figures of `events` (sorted). With `end`, the rate's span runs on to
    /// `end` when the silence since the newest event is longer than every
    /// interval.
    private static func statistics(of events: Deque<Int64>.SubSequence, end: Int64?) -> Statistics {
        let n = events.count
        guard n >= 2, let first = events.first, var last = events.last else { return .empty(count: n) }
        var intervals: [Int64] = []
        intervals.reserveCapacity(n - 1)
        // The sum is exact (an interval saturates only from `min` to `max`),
        // so a regular stream has a mean of exactly its interval and a jitter
        // of exactly zero, at any size: the variance is taken from each
        // interval's exact distance to the mean, not as E[d²] − E[d]², whose
        // two terms cancel to rounding noise once d² passes 2^53.
        var sum: Int128 = 0
        var previous = first
        for t in events.dropFirst() {
            let d = t.saturatingSubtract(previous)  // min to max saturates
            previous = t
            intervals.append(d)
            sum += Int128(d)
        }
        let count = Int128(n - 1)
        // count × d − sum = count × (d − mean), exact in Int128 (0 ≤ d < 2^63).
        var scaledSquares: Double = 0
        for d in intervals {
            let scaled = Double(Int128(d) * count - sum)
            scaledSquares += scaled * scaled
        }
        let variance = scaledSquares / (Double(count) * Double(count) * Double(count))
        intervals.sort()
        let longest = intervals[intervals.count - 1]
        if let end, end.saturatingSubtract(last) > longest { last = end }
        let span = Double(last.saturatingSubtract(first))
        return Statistics(count: n, rate: span > 0 ? Double(count) / span * 1e9 : 0,
                          minInterval: .nanoseconds(intervals[0]), maxInterval: .nanoseconds(longest),
                          meanInterval: .nanoseconds(Int64(roundedQuotient(sum, count))),
                          jitter: wholeNanoseconds(variance.squareRoot()),
                          p50Interval: .nanoseconds(percentile(50, of: intervals)),
                          p99Interval: .nanoseconds(percentile(99, of: intervals)))
    }

    /// `numerator / denominator` (both not negative, the denominator positive)
    /// rounded to the nearest integer, halves up.
    private static func roundedQuotient(_ numerator: Int128, _ denominator: Int128) -> Int128 {
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        return remainder * 2 >= denominator ? quotient + 1 : quotient
    }

    /// The `p`th percentile of `sorted` (not empty) by nearest rank: the element
    /// at rank ⌈p × n / 100⌉ (1-based).
    private static func percentile(_ p: Int, of sorted: [Int64]) -> Int64 {
        let rank = (p * sorted.count + 99) / 100
        return sorted[Swift.max(1, rank) - 1]
    }

    /// `ns` (not negative) rounded to whole nanoseconds, at most `Int64.max`
    /// (2^63 − 1: 2^63 and above are clamped; every `Double` below converts).
    private static func wholeNanoseconds(_ ns: Double) -> Duration {
        .nanoseconds(ns >= 0x1p63 ? Int64.max : Int64(ns.rounded()))
    }
}
