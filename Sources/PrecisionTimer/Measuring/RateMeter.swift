import DequeModule

/// Measures the rate of events (frames, messages) over a sliding window, and the
/// spread of the intervals between them: an FPS meter for any event stream.
///
/// ``record(at:)`` is O(1) amortized (one clock read, one append, evictions of
/// what left the window), cheap enough for every frame at 1 kHz; ``statistics``
/// walks the window. A value type: keep it on one thread or behind a `Mutex`.
public struct RateMeter: Sendable {
    /// What the window holds now.
    public struct Statistics: Sendable, Hashable {
        /// Events in the window.
        public var count: Int
        /// Events per second over the window: intervals in the window divided by
        /// the time they span (0 with fewer than two events).
        public var rate: Double
        /// The shortest interval between consecutive events (zero with fewer than
        /// two events).
        public var minInterval: Duration
        /// The longest interval between consecutive events.
        public var maxInterval: Duration
        /// The mean interval between consecutive events.
        public var meanInterval: Duration
        /// The standard deviation of the intervals.
        public var jitter: Duration
    }

    /// How far back the meter looks.
    public let window: Duration
    /// The clock `record()` reads.
    public let clock: PrecisionClock
    private let windowNanoseconds: Int64
    private var stamps: Deque<Int64> = []

    /// A meter over `window` (default one second) on `clock`.
    /// A window longer than `Int64` nanoseconds (292 years) is clamped to it.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a window that is
    ///   not positive.
    public init(window: Duration = .seconds(1), clock: PrecisionClock = .monotonic) throws {
        guard window > .zero else {
            throw PrecisionTimerError.invalidArgument("the window must be positive (got \(window))")
        }
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

    /// The window's figures.
    public var statistics: Statistics {
        let n = stamps.count
        guard n >= 2, let first = stamps.first, let last = stamps.last else {
            return Statistics(count: n, rate: 0, minInterval: .zero, maxInterval: .zero, meanInterval: .zero,
                              jitter: .zero)
        }
        var lo = Int64.max
        var hi = Int64.min
        var sum: Double = 0
        var sumSquares: Double = 0
        var previous = first
        for t in stamps.dropFirst() {
            let d = t - previous
            previous = t
            lo = Swift.min(lo, d)
            hi = Swift.max(hi, d)
            sum += Double(d)
            sumSquares += Double(d) * Double(d)
        }
        let intervals = Double(n - 1)
        let mean = sum / intervals
        let variance = Swift.max(0, sumSquares / intervals - mean * mean)
        let span = Double(last - first)
        return Statistics(count: n, rate: span > 0 ? intervals / span * 1e9 : 0,
                          minInterval: .nanoseconds(lo), maxInterval: .nanoseconds(hi),
                          meanInterval: Self.wholeNanoseconds(mean),
                          jitter: Self.wholeNanoseconds(variance.squareRoot()))
    }

    /// `ns` (not negative) rounded to whole nanoseconds, at most `Int64.max`.
    private static func wholeNanoseconds(_ ns: Double) -> Duration {
        .nanoseconds(ns >= 9.2e18 ? Int64.max : Int64(ns.rounded()))
    }
}
