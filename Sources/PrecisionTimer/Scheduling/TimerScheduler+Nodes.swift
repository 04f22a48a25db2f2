/// The one entry through which the public surface (the factories, the
/// registry, async sleep) makes timers: validate the arguments, make the node,
/// start it.
extension TimerScheduler {
    /// The current reading of `source` on this scheduler's clock (virtual under
    /// a ``VirtualClock``).
    func now(_ source: PrecisionClock.Source) -> Int64 { engine.now(source) }

    /// Puts a node made below on the schedule. A node cancelled before it
    /// started stays cancelled.
    func startTimer(_ node: TimerNode) { engine.start(node) }


    /// How far before now a repeating timer's grid may be anchored: 2^62 ns
    /// (about 146 years). The engine counts the ticks a late fire skips as
    /// `(now − deadline) / interval` in `Int64`, which a grid anchored further
    /// back would overflow.
    static let maximumLookBack: Int64 = 1 << 62

    /// `seconds` as a duration, rounded up to whole nanoseconds. Non-finite
    /// values are an error; values too large for `Int64` nanoseconds clamp to the
    /// largest ("never"), hugely negative ones to the most negative (a delay
    /// fires at once, an interval is rejected as not positive).
    static func duration(seconds: Double, _ name: String) throws -> Duration {
        guard seconds.isFinite else {
            throw PrecisionTimerError.invalidArgument("\(name) must be a finite number of seconds (got \(seconds))")
        }
        guard seconds < 9.2e9 else { return .nanoseconds(Int64.max) }
        guard seconds > -9.2e9 else { return .nanoseconds(Int64.min) }
        return .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }

    /// The node of a one-shot `delay` from now, validated and not yet started.
    func makeOneShotNode(
        after delay: Duration, clock: PrecisionClock, leeway: Duration, delivery: TimerDelivery,
        _ handler: TimerNode.Handler
    ) throws -> TimerNode {
        try clock.requireSleepable()
        // Any negative delay, however large, fires as soon as possible; one past
        // the clock's range saturates at "never".
        let ns = delay <= .zero ? 0 : delay.saturatingNanoseconds
        let deadline = now(clock.source).saturatingAdd(ns)
        return try makeNode(start: .init(nanoseconds: deadline), period: .zero, clock: clock, leeway: leeway,
                            policy: .skip, delivery: delivery, handler)
    }

    func makeRepeatingNode(
        every interval: Duration, startingAt start: PrecisionClock.Instant?, clock: PrecisionClock,
        leeway: Duration, policy: MissedTickPolicy, delivery: TimerDelivery,
        _ handler: TimerNode.Handler
    ) throws -> TimerNode {
        return try makeRepeatingNode(period: Self.period(every: interval), startingAt: start, clock: clock, leeway: leeway,
                                     policy: policy, delivery: delivery, handler)
    }

    /// `interval`, validated, as an exact period (one too large for `Int64`
    /// nanoseconds saturates: the ticks it reaches never come).
    static func period(every interval: Duration) throws -> Period {
        guard interval > .zero else {
            throw PrecisionTimerError.invalidArgument("interval must be positive (got \(interval))")
        }
        return Period(interval)
    }

    /// `count` ticks per `span`, validated, as an exact period.
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

    func makeRepeatingNode(
        period: Period, startingAt start: PrecisionClock.Instant?, clock: PrecisionClock,
        leeway: Duration, policy: MissedTickPolicy, delivery: TimerDelivery,
        _ handler: TimerNode.Handler
    ) throws -> TimerNode {
        try clock.requireSleepable()
        let first = start ?? .init(nanoseconds: now(clock.source).saturatingAdd(period.offset(ofTicks: 1)))
        guard first.nanoseconds >= now(clock.source).saturatingSubtract(Self.maximumLookBack) else {
            throw PrecisionTimerError.deadlineOutOfRange
        }
        return try makeNode(start: first, period: period, clock: clock,
                            leeway: Swift.min(leeway, .nanoseconds(period.floorNanoseconds)), policy: policy,
                            delivery: delivery, handler)
    }

    func makeNode(
        start: PrecisionClock.Instant, period: Period, clock: PrecisionClock, leeway: Duration,
        policy: MissedTickPolicy, delivery: TimerDelivery, _ handler: TimerNode.Handler
    ) throws -> TimerNode {
        try clock.requireSleepable()
        guard leeway >= .zero else {
            throw PrecisionTimerError.invalidArgument("leeway must not be negative (got \(leeway))")
        }
        return TimerNode(engine: engine, source: clock.source, deadline: start.nanoseconds, period: period,
                         leeway: leeway.saturatingNanoseconds, policy: policy, delivery: delivery, handler: handler)
    }
}
