/// Measures elapsed time with nanosecond resolution: a start, laps, and the time
/// since the start (what `mach_absolute_time` is used for on Apple platforms).
///
/// A value type; each call is one clock read, inlined into the caller (`bench
/// clock-read` reports the overhead per lap). For timing a block,
/// `PrecisionClock().measure { … }` (the standard `Clock.measure`) returns its
/// `Duration`.
public struct Stopwatch: Sendable {
    /// The clock the stopwatch reads.
    public let clock: PrecisionClock
    @usableFromInline var start: PrecisionClock.Instant
    @usableFromInline var lastLap: PrecisionClock.Instant

    /// A running stopwatch on `clock` (default monotonic).
    public init(clock: PrecisionClock = .monotonic) {
        self.clock = clock
        let now = clock.now
        start = now
        lastLap = now
    }

    /// When the stopwatch was started or last reset.
    public var startedAt: PrecisionClock.Instant { start }
    /// When the last lap ended (the start, before any lap).
    public var lastLapAt: PrecisionClock.Instant { lastLap }

    /// Time since the start.
    @inlinable
    public var elapsed: Duration { start.duration(to: clock.now) }

    /// Ends a lap: returns the time since the previous lap (or the start).
    @inlinable @discardableResult
    public mutating func lap() -> Duration {
        let now = clock.now
        defer { lastLap = now }
        return lastLap.duration(to: now)
    }

    /// Starts again from now.
    @inlinable
    public mutating func reset() {
        let now = clock.now
        start = now
        lastLap = now
    }
}
