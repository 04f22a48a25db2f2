/// The timer factories: one-shots, repeating timers and weak-owner timers.
///
/// The everyday factories do not throw: what only a programmer's constant can
/// get wrong (a zero or negative interval, a rate out of range, a non-finite
/// number of seconds, the `monotonicRaw` clock) is a precondition failure naming
/// the factory and the value. An interval read at run time goes through
/// ``TimerInterval``, whose initializers throw, and the forms that take one.
/// The forms given a start (`startingAt:`) throw, because a start is a deadline
/// computed at run time (``PrecisionTimerError/deadlineOutOfRange`` for one more
/// than 2^62 ns before now), and, since they throw, they report every other bad
/// argument by throwing too. A negative leeway is zero.
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
    ///   It keeps `handler` until it is released or cancelled, also after it has
    ///   fired, so that ``OneShotTimer/reschedule(after:)`` can fire it again: do
    ///   not capture an object that stores the timer strongly in it (use the
    ///   `owner:` form, a weak capture, or ``Tick/cancelTimer()`` in the handler).
    /// - Precondition: `clock` is not `monotonicRaw` (the kernel cannot sleep on
    ///   it). A negative `leeway` is zero (a documented clamp).
    public func schedule(
        after delay: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) -> OneShotTimer {
        let node = makeOneShotNode(after: delay, clock: clock, leeway: leeway, delivery: delivery, #function,
                                   .plain(handler))
        startTimer(node)
        return OneShotTimer(node: node)
    }

    /// Runs `handler` once at `deadline` on `clock` (at once if it has passed).
    /// ``PrecisionClock/Instant/max`` means "never": the timer waits until cancelled.
    /// Any deadline is accepted.
    /// - Precondition: as ``schedule(after:clock:leeway:delivery:_:)``.
    public func schedule(
        at deadline: PrecisionClock.Instant, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) -> OneShotTimer {
        clock.requireSleepablePrecondition(#function)
        let node = makeValidatedNode(start: deadline, period: .zero, clock: clock, leeway: leeway, policy: .skip,
                                     delivery: delivery, .plain(handler))
        startTimer(node)
        return OneShotTimer(node: node)
    }

    /// Runs `handler` once, `seconds` from now: the `TimeInterval` spelling for code
    /// migrating from `Timer` / `asyncAfter`. 9.2e9 seconds and more mean "never";
    /// any negative number fires as soon as possible.
    /// - Precondition: `seconds` is finite (not NaN or infinite); and as
    ///   ``schedule(after:clock:leeway:delivery:_:)``.
    public func schedule(
        afterSeconds seconds: Double, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, _ handler: @escaping @Sendable (Tick) -> Void
    ) -> OneShotTimer {
        let node = makeOneShotNode(after: TimerInterval.duration(seconds: seconds, "delay", #function), clock: clock,
                                   leeway: leeway, delivery: delivery, #function, .plain(handler))
        startTimer(node)
        return OneShotTimer(node: node)
    }

    /// A one-shot that holds `owner` weakly and passes it to `handler`: the
    /// idle timeout of an object that stores its own timer and re-arms it with
    /// ``OneShotTimer/reschedule(after:)``. A one-shot keeps its handler while
    /// its handle lives (so it can be rescheduled after it fired); this form
    /// never keeps the owner alive through it. When the owner is gone at the
    /// deadline, the timer ends without a handler call: it is then cancelled
    /// (``ScheduledTimer/isCancelled``), not fired.
    /// - Precondition: as ``schedule(after:clock:leeway:delivery:_:)``.
    public func schedule<Owner: AnyObject & Sendable>(
        after delay: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        delivery: TimerDelivery = .inline, owner: Owner, _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) -> OneShotTimer {
        let node = makeOneShotNode(after: delay, clock: clock, leeway: leeway, delivery: delivery, #function,
                                   .stoppable { [weak owner] tick in
                                       guard let owner else { return false }
                                       handler(owner, tick)
                                       return true
                                   })
        startTimer(node)
        return OneShotTimer(node: node)
    }

    // MARK: - Repeating

    /// Runs `handler` every `interval`, drift-free: tick `k` is due at exactly
    /// `start + k × interval` however late earlier ticks ran, where `start` is one
    /// interval from now. To anchor the grid elsewhere, use
    /// ``repeating(every:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``.
    ///
    /// - Parameters:
    ///   - interval: the period; must be positive. It keeps its attoseconds: tick
    ///     `k` is due at the exact `start + k × interval`, rounded once to the
    ///     nearest nanosecond (an interval under 1 ns is 1 ns). One too large for
    ///     `Int64` nanoseconds means the ticks it would reach never come.
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///     Clamped to 1 ns under `interval` (a documented clamp: each tick's
    ///     window then ends before the next tick is due).
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - delivery: where the handler runs.
    ///   - recordsLateness: whether the timer keeps a lateness histogram of its
    ///     own (``RepeatingTimer/lateness``), for the one loop you watch. The
    ///     scheduler's ``TimerScheduler/statistics`` record every timer either
    ///     way. Default false.
    ///   - handler: the work, receiving each ``Tick``. Do not capture the returned
    ///     timer strongly in it (that would keep it alive): use ``Tick/cancelTimer()``
    ///     or the `owner:` form.
    /// - Returns: the timer, running. Releasing it cancels it.
    /// - Precondition: `interval` is positive; `clock` is not `monotonicRaw`. A
    ///   value read at run time goes through ``TimerInterval`` and
    ///   ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(TimerInterval,_,_,_,_,_,_)``
    ///   instead. A negative `leeway` is zero.
    public func repeating(
        every interval: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        _ handler: @escaping @Sendable (Tick) -> Void
    ) -> RepeatingTimer {
        startRepeating(period: TimerInterval.period(every: interval, #function), clock: clock, leeway: leeway,
                       policy: policy, delivery: delivery, recordsLateness: recordsLateness, .plain(handler), #function)
    }

    /// ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)`` on a grid anchored at
    /// `start`: tick 0 is due at `start`.
    ///
    /// A start in the past anchors the grid there: the ticks already due are
    /// missed ticks, handled per `policy` (``MissedTickPolicy/burst`` fires each of
    /// them). ``PrecisionClock/Instant/max`` is "never"; so is a start plus one
    /// interval past the clock's range for the ticks after tick 0.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` when `start` lies more
    ///   than 2^62 ns (about 146 years) before now: a start is a deadline, computed
    ///   at run time, so it is checked by throwing. A call that throws reports
    ///   every bad argument so: ``PrecisionTimerError/invalidArgument(_:)`` for an
    ///   interval that is not positive, ``PrecisionTimerError/unsupportedClock(_:)``
    ///   for `monotonicRaw`.
    public func repeating(
        every interval: Duration, startingAt start: PrecisionClock.Instant,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, recordsLateness: Bool = false, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> RepeatingTimer {
        try startRepeating(period: TimerInterval.period(every: interval), startingAt: start, clock: clock,
                           leeway: leeway, policy: policy, delivery: delivery,
                           recordsLateness: recordsLateness, .plain(handler))
    }

    /// ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)`` with a checked
    /// interval (one read from a configuration, say): it cannot trap on it.
    /// - Precondition: `clock` is not `monotonicRaw` (check
    ///   ``PrecisionClock/Source/canSleep`` for a clock chosen at run time).
    public func repeating(
        every interval: TimerInterval, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        _ handler: @escaping @Sendable (Tick) -> Void
    ) -> RepeatingTimer {
        startRepeating(period: interval.period, clock: clock, leeway: leeway, policy: policy, delivery: delivery,
                       recordsLateness: recordsLateness, .plain(handler), #function)
    }

    /// The `owner:` form with a checked interval.
    /// - Precondition: as ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(TimerInterval,_,_,_,_,_,_)``.
    public func repeating<Owner: AnyObject & Sendable>(
        every interval: TimerInterval, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) -> RepeatingTimer {
        clock.requireSleepablePrecondition(#function)
        return repeating(period: interval.period, first: defaultStart(period: interval.period, clock: clock),
                         clock: clock, leeway: leeway, policy: policy, delivery: delivery,
                         recordsLateness: recordsLateness, owner: owner, handler)
    }

    /// A repeating timer that holds `owner` weakly and passes it to `handler`: the
    /// timer never keeps its owner alive, and cancels itself at the first tick
    /// after the owner is gone (the weak-target timer done right).
    ///
    /// Store the returned timer in the owner: when the owner is released, so is the
    /// timer, which cancels it. Even if it is stored elsewhere, it stops within
    /// one tick of the owner's deinit. An owner already gone when the first tick
    /// is due cancels the timer then, without a handler call.
    /// - Precondition: as ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``.
    public func repeating<Owner: AnyObject & Sendable>(
        every interval: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) -> RepeatingTimer {
        let period = TimerInterval.period(every: interval, #function)
        clock.requireSleepablePrecondition(#function)
        return repeating(period: period, first: defaultStart(period: period, clock: clock), clock: clock,
                         leeway: leeway, policy: policy, delivery: delivery,
                         recordsLateness: recordsLateness, owner: owner, handler)
    }

    /// The `owner:` form on a grid anchored at `start`.
    /// - Throws: as ``repeating(every:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``.
    public func repeating<Owner: AnyObject & Sendable>(
        every interval: Duration, startingAt start: PrecisionClock.Instant,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, recordsLateness: Bool = false, owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) throws -> RepeatingTimer {
        let period = try TimerInterval.period(every: interval)
        try clock.requireSleepable()
        return repeating(period: period, first: try checkedStart(start, clock: clock), clock: clock,
                         leeway: leeway, policy: policy, delivery: delivery,
                         recordsLateness: recordsLateness, owner: owner, handler)
    }

    /// The weak-owner timer on an exact period whose arguments were validated
    /// (the public forms and `FrameLink`).
    func repeating<Owner: AnyObject & Sendable>(
        period: Period, first: PrecisionClock.Instant, clock: PrecisionClock,
        leeway: Duration = .zero, policy: MissedTickPolicy, delivery: TimerDelivery,
        recordsLateness: Bool = false, owner: Owner,
        _ handler: @escaping @Sendable (Owner, Tick) -> Void
    ) -> RepeatingTimer {
        startRepeating(period: period, first: first, clock: clock, leeway: leeway, policy: policy,
                       delivery: delivery, recordsLateness: recordsLateness,
                       .stoppable { [weak owner] tick in
                           guard let owner else { return false }
                           handler(owner, tick)
                           return true
                       })
    }

    /// The throwing forms' repeating timer: a checked period on a grid anchored
    /// at `start`, which is checked too (a start is a deadline computed at run
    /// time), as is the clock.
    func startRepeating(
        period: Period, startingAt start: PrecisionClock.Instant, clock: PrecisionClock, leeway: Duration,
        policy: MissedTickPolicy, delivery: TimerDelivery, recordsLateness: Bool = false, _ handler: TimerNode.Handler
    ) throws -> RepeatingTimer {
        try clock.requireSleepable()
        return startRepeating(period: period, first: try checkedStart(start, clock: clock), clock: clock,
                              leeway: leeway, policy: policy, delivery: delivery,
                              recordsLateness: recordsLateness, handler)
    }

    /// The non-throwing forms' repeating timer: a checked period, tick 0 one
    /// period from now. Traps, naming `function`, on a clock that cannot sleep.
    func startRepeating(
        period: Period, clock: PrecisionClock, leeway: Duration, policy: MissedTickPolicy,
        delivery: TimerDelivery, recordsLateness: Bool = false, _ handler: TimerNode.Handler, _ function: StaticString
    ) -> RepeatingTimer {
        clock.requireSleepablePrecondition(function)
        return startRepeating(period: period, first: defaultStart(period: period, clock: clock), clock: clock,
                              leeway: leeway, policy: policy, delivery: delivery,
                              recordsLateness: recordsLateness, handler)
    }

    /// Makes and starts the node of a repeating timer whose arguments were validated.
    func startRepeating(
        period: Period, first: PrecisionClock.Instant, clock: PrecisionClock, leeway: Duration,
        policy: MissedTickPolicy, delivery: TimerDelivery, recordsLateness: Bool = false, _ handler: TimerNode.Handler
    ) -> RepeatingTimer {
        let node = makeRepeatingNode(period: period, first: first, clock: clock, leeway: leeway, policy: policy,
                                     delivery: delivery, handler)
        node.recordsLateness = recordsLateness
        startTimer(node)
        return RepeatingTimer(node: node)
    }

    /// Runs `handler` at an exact rate: `count` ticks per `span` — 2,880 per 60 s
    /// for a 24-PPQN MIDI clock at 120 BPM, 60,000 per 1,001 s for 59.94 fps
    /// video. Tick `k` is due at `start + k × span / count` (`start` one period
    /// from now), computed exactly and rounded once to the nearest nanosecond, so
    /// the grid keeps the rate for as long as it runs, where any period in whole
    /// nanoseconds would drift from it.
    ///
    /// - Parameters:
    ///   - count: ticks per `span`, 1 … 9,223,372,036.
    ///   - span: the duration `count` ticks take; positive.
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - delivery: where the handler runs.
    ///   - recordsLateness: whether the timer keeps a lateness histogram of its
    ///     own (``RepeatingTimer/lateness``), for the one loop you watch. The
    ///     scheduler's ``TimerScheduler/statistics`` record every timer either
    ///     way. Default false.
    ///   - handler: the work, receiving each ``Tick``.
    /// - Returns: the timer, running. Releasing it cancels it.
    /// - Precondition: `count` in 1 … 9,223,372,036 and `span` positive; and as
    ///   ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``.
    public func repeating(
        ticks count: Int, per span: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        _ handler: @escaping @Sendable (Tick) -> Void
    ) -> RepeatingTimer {
        startRepeating(period: TimerInterval.period(ticks: count, per: span, #function), clock: clock,
                       leeway: leeway, policy: policy, delivery: delivery,
                       recordsLateness: recordsLateness, .plain(handler), #function)
    }

    /// ``repeating(ticks:per:clock:leeway:policy:delivery:recordsLateness:_:)`` on a grid
    /// anchored at `start`: tick 0 is due at `start`.
    /// - Throws: as ``repeating(every:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``;
    ///   ``PrecisionTimerError/invalidArgument(_:)`` for a count or span out of range.
    public func repeating(
        ticks count: Int, per span: Duration, startingAt start: PrecisionClock.Instant,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        delivery: TimerDelivery = .inline, recordsLateness: Bool = false, _ handler: @escaping @Sendable (Tick) -> Void
    ) throws -> RepeatingTimer {
        try startRepeating(period: TimerInterval.period(ticks: count, per: span), startingAt: start, clock: clock,
                           leeway: leeway, policy: policy, delivery: delivery,
                           recordsLateness: recordsLateness, .plain(handler))
    }

    /// `repeating(every:)` with the interval in seconds, for code migrating from
    /// `Timer.scheduledTimer(withTimeInterval:repeats:)`. A positive number under
    /// 1 ns rounds up to 1 ns; 9.2e9 seconds and more mean "never".
    /// - Precondition: `seconds` is finite and positive; and as
    ///   ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``.
    public func repeating(
        everySeconds seconds: Double, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, delivery: TimerDelivery = .inline, recordsLateness: Bool = false,
        _ handler: @escaping @Sendable (Tick) -> Void
    ) -> RepeatingTimer {
        let interval = TimerInterval.duration(seconds: seconds, "interval", #function)
        return startRepeating(period: TimerInterval.period(every: interval, #function), clock: clock, leeway: leeway,
                              policy: policy, delivery: delivery,
                              recordsLateness: recordsLateness, .plain(handler), #function)
    }
}
