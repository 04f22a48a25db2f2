import CMonoClock

/// Measures elapsed time with nanosecond resolution: a start, laps, and the time
/// since the start (what seed 002 does with `mach_absolute_time`).
///
/// A value type; each call is one clock read. For timing a block,
/// `PrecisionClock().measure { … }` (the standard `Clock.measure`) returns its
/// `Duration`.
public struct Stopwatch: Sendable {
    /// The clock the stopwatch reads.
    public let clock: PrecisionClock
    /// When the stopwatch was started or last reset.
    public private(set) var startedAt: PrecisionClock.Instant
    /// When the last lap ended (the start, before any lap).
    public private(set) var lastLapAt: PrecisionClock.Instant

    /// A running stopwatch on `clock` (default monotonic).
    public init(clock: PrecisionClock = .monotonic) {
        self.clock = clock
        let now = clock.now
        startedAt = now
        lastLapAt = now
    }

    /// Time since the start.
    public var elapsed: Duration { startedAt.duration(to: clock.now) }

    /// Ends a lap: returns the time since the previous lap (or the start).
    @discardableResult
    public mutating func lap() -> Duration {
        let now = clock.now
        defer { lastLapAt = now }
        return lastLapAt.duration(to: now)
    }

    /// Starts again from now.
    public mutating func reset() {
        let now = clock.now
        startedAt = now
        lastLapAt = now
    }
}
