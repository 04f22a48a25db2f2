/// A repeating timer's interval, checked: the way in for a period that comes
/// from outside the program (a configuration file, a flag, the network, a
/// division computed at run time).
///
/// The everyday forms take a `Duration` and trap on a zero or negative one,
/// because there it is a programmer's constant (`.milliseconds(10)`). A value
/// read at run time goes through `TimerInterval` first: its initializers throw
/// ``PrecisionTimerError/invalidArgument(_:)`` naming the value, and every call
/// that takes an interval has a form that takes a `TimerInterval` and cannot
/// trap on it.
///
/// ```swift
/// let interval = try TimerInterval(seconds: config.pollSeconds)  // throws on 0, -5, NaN
/// let poll = scheduler.repeating(every: interval) { _ in refresh() }
/// ```
public struct TimerInterval: Sendable, Hashable, CustomStringConvertible {
    /// The exact period.
    let period: Period

    /// `interval`, which must be positive. It keeps its attoseconds; one under
    /// 1 ns is 1 ns, one too large for `Int64` nanoseconds means the ticks it
    /// would reach never come (as for the `Duration` forms).
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for zero or a
    ///   negative interval.
    public init(_ interval: Duration) throws {
        period = try Self.period(every: interval)
    }

    /// `seconds`, which must be finite and positive (the `TimeInterval`
    /// spelling). Rounded up to whole nanoseconds; 9.2e9 seconds and more mean
    /// "never".
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for NaN, an
    ///   infinity, zero or a negative number.
    public init(seconds: Double) throws {
        period = try Self.period(every: Self.duration(seconds: seconds, "interval"))
    }

    /// `count` ticks per `span`, exactly (2,880 per 60 s for a MIDI clock,
    /// 60,000 per 1,001 s for 59.94 fps).
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a count
    ///   outside 1 … 9,223,372,036 or a span that is not positive.
    public init(ticks count: Int, per span: Duration) throws {
        period = try Self.period(ticks: count, per: span)
    }

    init(validated period: Period) {
        self.period = period
    }

    /// The interval, to the attosecond.
    public var duration: Duration { period.duration }

    /// The interval as a person writes it (`16.7 ms`).
    public var description: String { "\(duration.readable)" }

    // MARK: - The checks every interval-taking call shares

    /// `interval` as an exact period (one too large for `Int64` nanoseconds
    /// saturates: the ticks it reaches never come).
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` when it is not positive.
    static func period(every interval: Duration) throws -> Period {
        guard interval > .zero else {
            throw PrecisionTimerError.invalidArgument("the interval must be positive (got \(interval))")
        }
        return Period(interval)
    }

    /// `count` ticks per `span` as an exact period.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a count outside
    ///   1 ... 9,223,372,036 or a span that is not positive.
    static func period(ticks count: Int, per span: Duration) throws -> Period {
        guard count > 0 && count <= Int(Int64.max / 1_000_000_000) else {
            throw PrecisionTimerError.invalidArgument(
                "ticks must be in 1...\(Int64.max / 1_000_000_000) (got \(count))")
        }
        guard span > .zero else {
            throw PrecisionTimerError.invalidArgument("the span must be positive (got \(span))")
        }
        return Period(ticks: Int64(count), perAttoseconds: span.attoseconds)
    }

    /// `seconds` as a duration, rounded up to whole nanoseconds; values too
    /// large for `Int64` nanoseconds clamp to the largest ("never"), hugely
    /// negative ones to the most negative.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for NaN or an infinity.
    static func duration(seconds: Double, _ name: String) throws -> Duration {
        guard seconds.isFinite else {
            throw PrecisionTimerError.invalidArgument("\(name) must be a finite number of seconds (got \(seconds))")
        }
        guard seconds < 9.2e9 else { return .nanoseconds(Int64.max) }
        guard seconds > -9.2e9 else { return .nanoseconds(Int64.min) }
        return .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }

    // MARK: - The same checks, trapping, for the calls that do not throw


    /// `seconds` as a duration (see ``TimerInterval/duration(seconds:_:)``); a
    /// non-finite value is a precondition failure naming `function`.
    static func duration(seconds: Double, _ name: String, _ function: StaticString) -> Duration {
        requireValid(function) { try TimerInterval.duration(seconds: seconds, name) }
    }

    /// `interval` as an exact period (``TimerInterval/period(every:)``); a zero
    /// or negative interval is a precondition failure naming `function`.
    static func period(every interval: Duration, _ function: StaticString) -> Period {
        requireValid(function) { try TimerInterval.period(every: interval) }
    }

    /// `count` ticks per `span` as an exact period
    /// (``TimerInterval/period(ticks:per:)``); a count outside
    /// 1 ... 9,223,372,036 or a span that is not positive is a precondition
    /// failure naming `function`.
    static func period(ticks count: Int, per span: Duration, _ function: StaticString) -> Period {
        requireValid(function) { try TimerInterval.period(ticks: count, per: span) }
    }

}
