/// The timer factories: one-shots, repeating timers and weak-owner timers.
extension TimerScheduler {
    // MARK: - One-shot

    /// Runs `handler` once, `delay` from now on `clock`.
    ///
    /// - Parameters:
    ///   - delay: how long from now. Zero or negative (however large) fires as
    ///     soon as possible (a documented clamp, as `asyncAfter` does with a past
    ///     deadline). A delay that reaches past the end of the clock's range means
    ///     "never" (`DISPATCH_TIME_FOREVER`): the timer waits until cancelled.
    ///   - clock: the kernel clock the delay is measured on. Default monotonic.
    ///   - leeway: how late the timer may fire so the scheduler can coalesce
    ///     wake-ups; never early. Default zero (the hybrid wait's precision).
    ///   - delivery: where the handler runs. Default ``TimerDelivery/inline``.
    ///   - handler: the work. It receives the ``Tick``.
    /// - Returns: the timer. Releasing it cancels it (so keep it until it fires).
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a negative leeway;
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on `monotonicRaw`.
    public func schedule(
        after delay: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> OneShotTimer {
        let node = try makeOneShotNode(after: delay, clock: clock, leeway: leeway, delivery: delivery,
                                       .plain(handler))
        startTimer(node)
        return OneShotTimer(node: node)
    }

    /// Runs `handler` once at `deadline` on `clock` (at once if it has passed).
    /// ``PrecisionClock/Instant/max`` means "never": the timer waits until cancelled.
    /// - Throws: as ``schedule(after:clock:leeway:delivery:_:)``.
    public func schedule(
        at deadline: PrecisionClock.Instant, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> OneShotTimer {
        let node = try makeNode(start: deadline, period: .zero, clock: clock, leeway: leeway, policy: .skip,
                                delivery: delivery, .plain(handler))
        startTimer(node)
        return OneShotTimer(node: node)
    }

    /// Runs `handler` once, `seconds` from now: the `TimeInterval` spelling for code
    /// migrating from `Timer` / `asyncAfter`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a NaN or infinite
    ///   number of seconds (9.2e9 seconds and more mean "never"; any negative
    ///   number fires as soon as possible); and as
    ///   ``schedule(after:clock:leeway:delivery:_:)``.
    public func schedule(
        afterSeconds seconds: Double, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> OneShotTimer {
        try schedule(after: Self.duration(seconds: seconds, "delay"), clock: clock, leeway: leeway,
                     delivery: delivery, handler)
    }

    // MARK: - Repeating

    /// Runs `handler` every `interval`, drift-free: tick `k` is due at exactly
    /// `start + k × interval` however late earlier ticks ran.
    ///
    /// - Parameters:
    ///   - interval: the period; must be positive. It keeps its attoseconds: tick
    ///     `k` is due at the exact `start + k × interval`, rounded once to the
    ///     nearest nanosecond (an interval under 1 ns is 1 ns). One too large for `Int64` nanoseconds
    ///     (or a start plus one interval past the clock's range) means the ticks
    ///     it would reach never come.
    ///   - start: tick 0's deadline. Default: one interval from now. A start in
    ///     the past anchors the grid there: the ticks already due are missed ticks,
    ///     handled per `policy` (``MissedTickPolicy/burst`` fires each of them).
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///     Clamped to `interval` (a documented clamp: more would let ticks overlap).
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - delivery: where the handler runs.
    ///   - handler: the work, receiving each ``Tick``. Do not capture the returned
    ///     timer strongly in it (that would keep it alive): use ``Tick/cancelTimer()``
    ///     or the `owner:` form.
    /// - Returns: the timer, running. Releasing it cancels it.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a zero or negative
    ///   interval or a negative leeway; ``PrecisionTimerError/deadlineOutOfRange``
    ///   when the start lies more than 2^62 ns (about 146 years) before now;
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on `monotonicRaw`. A start of
    ///   ``PrecisionClock/Instant/max`` is "never".
    public func repeating(
        every interval: Duration, startingAt start: PrecisionClock.Instant? = nil,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> RepeatingTimer {
        let node = try makeRepeatingNode(every: interval, startingAt: start, clock: clock, leeway: leeway,
                                         policy: policy, delivery: delivery, .plain(handler))
        startTimer(node)
        return RepeatingTimer(node: node)
    }

    /// A repeating timer that holds `owner` weakly and passes it to `handler`: the
    /// timer never keeps its owner alive, and cancels itself at the first tick
    /// after the owner is gone (the weak-target timer done right).
    ///
    /// Store the returned timer in the owner: when the owner is released, so is the
    /// timer, which cancels it. Even if it is stored elsewhere, it stops within
    /// one tick of the owner's deinit. An owner already gone when the first tick
    /// is due cancels the timer then, without a handler call.
    /// - Throws: as ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``.
    public func repeating<Owner: AnyObject & Sendable>(
        every interval: Duration, startingAt start: PrecisionClock.Instant? = nil,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) throws -> RepeatingTimer {
        return try repeating(period: Self.period(every: interval), startingAt: start, clock: clock, leeway: leeway,
                             policy: policy, delivery: delivery, owner: owner, handler)
    }

    /// The weak-owner timer on an exact period (the public forms and `FrameLink`).
    func repeating<Owner: AnyObject & Sendable>(
        period: Period, startingAt start: PrecisionClock.Instant? = nil, clock: PrecisionClock,
        leeway: Duration = .zero, policy: MissedTickPolicy, delivery: TimerDelivery, owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) throws -> RepeatingTimer {
        let node = try makeRepeatingNode(period: period, startingAt: start, clock: clock, leeway: leeway,
                                         policy: policy, delivery: delivery,
                                         .stoppable { [weak owner] tick in
                                             guard let owner else { return false }
                                             handler(owner, tick)
                                             return true
                                         })
        startTimer(node)
        return RepeatingTimer(node: node)
    }

    /// Runs `handler` at an exact rate: `count` ticks per `span` — 2,880 per 60 s
    /// for a 24-PPQN MIDI clock at 120 BPM, 60,000 per 1,001 s for 59.94 fps
    /// video. Tick `k` is due at `start + k × span / count`, computed exactly and
    /// rounded once to the nearest nanosecond, so the grid keeps the rate for as
    /// long as it runs, where any period in whole nanoseconds would drift from it.
    ///
    /// - Parameters:
    ///   - count: ticks per `span`, 1 … 9,223,372,036.
    ///   - span: the duration `count` ticks take; positive.
    ///   - start: tick 0's deadline. Default: one period from now.
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - delivery: where the handler runs.
    ///   - handler: the work, receiving each ``Tick``.
    /// - Returns: the timer, running. Releasing it cancels it.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a count or span
    ///   out of range, and as ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``.
    public func repeating(
        ticks count: Int, per span: Duration, startingAt start: PrecisionClock.Instant? = nil,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> RepeatingTimer {
        let node = try makeRepeatingNode(period: Self.period(ticks: count, per: span), startingAt: start,
                                         clock: clock, leeway: leeway, policy: policy, delivery: delivery,
                                         .plain(handler))
        startTimer(node)
        return RepeatingTimer(node: node)
    }

    /// `repeating(every:)` with the interval in seconds, for code migrating from
    /// `Timer.scheduledTimer(withTimeInterval:repeats:)`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a NaN, infinite,
    ///   zero or negative number of seconds (a positive one under 1 ns rounds up
    ///   to 1 ns; 9.2e9 seconds and more mean "never"); and as
    ///   ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``.
    public func repeating(
        everySeconds seconds: Double, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline,
        _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> RepeatingTimer {
        try repeating(every: Self.duration(seconds: seconds, "interval"), clock: clock, leeway: leeway,
                      policy: policy, delivery: delivery, handler)
    }
}
