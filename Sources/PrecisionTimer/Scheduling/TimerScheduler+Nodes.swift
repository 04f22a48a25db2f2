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


    /// A given start of a grid, checked: a start is a deadline, which a program
    /// computes at run time (from a `Date` read from input, say), so one too far
    /// back is an error to throw, not a trap.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` for a start more than
    ///   2^62 ns (``maximumLookBack``) before now.
    func checkedStart(_ start: PrecisionClock.Instant, clock: PrecisionClock) throws -> PrecisionClock.Instant {
        guard start.nanoseconds >= now(clock.source).saturatingSubtract(TimerEngine.maximumLookBack) else {
            throw PrecisionTimerError.deadlineOutOfRange
        }
        return start
    }

    /// The default start of a grid: one period from now.
    func defaultStart(period: Period, clock: PrecisionClock) -> PrecisionClock.Instant {
        .init(nanoseconds: now(clock.source).saturatingAdd(period.offset(ofTicks: 1)))
    }

    /// The node of a one-shot `delay` from now, validated (preconditions naming
    /// `function`) and not yet started.
    func makeOneShotNode(
        after delay: Duration, clock: PrecisionClock, leeway: Duration, delivery: TimerDelivery,
        _ function: StaticString, _ handler: TimerNode.Handler
    ) -> TimerNode {
        clock.requireSleepablePrecondition(function)
        // Any negative delay, however large, fires as soon as possible; one past
        // the clock's range saturates at "never".
        let ns = max(0, delay.saturatingNanoseconds)  // rounded up: a negative delay gives at most 0
        let deadline = now(clock.source).saturatingAdd(ns)
        return makeValidatedNode(start: .init(nanoseconds: deadline), period: .zero, clock: clock, leeway: leeway,
                                 policy: .skip, delivery: delivery, handler)
    }

    /// The node of a repeating timer whose arguments were validated (with
    /// `requireSleepablePrecondition`, and the start checked or
    /// defaulted); the leeway is clamped to the period's `leewayLimit`.
    func makeRepeatingNode(
        period: Period, first: PrecisionClock.Instant, clock: PrecisionClock,
        leeway: Duration, policy: MissedTickPolicy, delivery: TimerDelivery,
        _ handler: TimerNode.Handler
    ) -> TimerNode {
        makeValidatedNode(start: first, period: period, clock: clock,
                          leeway: Swift.min(leeway.clampedLeeway, .nanoseconds(period.leewayLimit)), policy: policy,
                          delivery: delivery, handler)
    }

    /// A node from arguments already validated.
    func makeValidatedNode(
        start: PrecisionClock.Instant, period: Period, clock: PrecisionClock, leeway: Duration,
        policy: MissedTickPolicy, delivery: TimerDelivery, _ handler: TimerNode.Handler
    ) -> TimerNode {
        TimerNode(engine: engine, source: clock.source, deadline: start.nanoseconds, period: period,
                  leeway: leeway.clampedLeeway.saturatingNanoseconds, policy: policy, delivery: delivery,
                  handler: handler)
    }

    /// The node of an async sleep (`TimerScheduler+Sleep.swift`): the async waits
    /// throw anyway (`CancellationError`), and report a clock that cannot sleep
    /// by throwing; a negative tolerance is zero.
    /// - Throws: ``PrecisionTimerError/unsupportedClock(_:)`` on `monotonicRaw`.
    func makeNode(
        start: PrecisionClock.Instant, period: Period, clock: PrecisionClock, leeway: Duration,
        policy: MissedTickPolicy, delivery: TimerDelivery, _ handler: TimerNode.Handler
    ) throws -> TimerNode {
        try clock.requireSleepable()
        return makeValidatedNode(start: start, period: period, clock: clock, leeway: leeway, policy: policy,
                                 delivery: delivery, handler)
    }
}
