/// A timer's schedule as a value: where its ticks fall, which is next, and
/// what a fire, a resume, a new interval or a moved deadline do to them.
///
/// Tick `k` is due at `origin + (k − originIndex) × period` nanoseconds of the
/// timer's clock, the product exact (``Period`` keeps fractions of a
/// nanosecond) and rounded once to the nearest nanosecond. A re-anchoring (the delay policy, a new interval, a moved
/// deadline) moves `origin` and `originIndex` together, so no product of a large
/// index and an interval is formed for a grid that was re-anchored late in a
/// timer's life. A deadline past the clock's range saturates at `Int64.max`,
/// which means "never". The missed-tick policies are arithmetic here, with no
/// lock and no clock (as tokio's `MissedTickBehavior::next_timeout`): the engine
/// calls these under its lock with the time it read.
struct Grid: Equatable, Sendable {
    /// The period; zero for a one-shot (only `nextDeadline` is used).
    private(set) var period: Period
    /// Tick `originIndex` is due at `origin`.
    private(set) var origin: Int64
    private(set) var originIndex: Int64 = 0
    /// The pending tick and its deadline.
    private(set) var nextIndex: Int64 = 0
    /// The pending tick's deadline (computed: a stored copy would cost every
    /// timer eight bytes).
    @inline(__always) var nextDeadline: Int64 { deadline(ofTick: nextIndex) }
    /// The last tick fired (-1 before the first).
    private(set) var lastFiredIndex: Int64 = -1

    /// A grid whose tick 0 is due at `firstDeadline`. (The missed-tick policy
    /// is passed to ``fire(at:policy:)`` and ``resume(at:policy:)``: the timer
    /// keeps it beside its other one-byte fields, which keeps its node small.)
    init(firstDeadline: Int64, period: Period) {
        self.period = period
        self.origin = firstDeadline
    }

    var isRepeating: Bool { !period.isZero }

    /// The deadline of tick `k`, saturating ("never" past the clock's range).
    @inline(__always)
    func deadline(ofTick k: Int64) -> Int64 {
        origin.saturatingAdd(period.offset(ofTicks: k.saturatingSubtract(originIndex)))
    }

    /// The latest tick due at `now`, at least the pending one.
    func latestDueIndex(at now: Int64) -> Int64 {
        guard now > nextDeadline else { return nextIndex }
        var k = Swift.max(nextIndex, originIndex.saturatingAdd(period.ticks(in: now.saturatingSubtract(origin))))
        // The estimate is the exact quotient's floor; the rounding of each
        // deadline can move the answer by one either way.
        while k < .max && deadline(ofTick: k + 1) <= now { k += 1 }
        while k > nextIndex && deadline(ofTick: k) > now { k -= 1 }
        return k
    }

    /// Fires the grid at `now` (at or after ``nextDeadline``): returns the tick
    /// that fires and moves to the next one by the policy.
    ///
    /// - `.skip`: the latest tick due at `now` fires; the ones before it since the
    ///   last fire are missed.
    /// - `.burst`: the pending tick fires; later ones due already follow one per
    ///   fire, back to back.
    /// - `.delay`: the pending tick fires and the grid is re-anchored at `now`, so
    ///   the next tick is one interval after this fire.
    mutating func fire(at now: Int64, policy: MissedTickPolicy) -> (index: Int64, deadline: Int64, missed: Int64) {
        let k = policy == .skip ? latestDueIndex(at: now) : nextIndex
        let fired = (index: k, deadline: deadline(ofTick: k), missed: k &- lastFiredIndex &- 1)
        lastFiredIndex = k
        if policy == .delay {
            anchor(tick: k, at: now)
        }
        moveTo(tick: k.saturatingAdd(1))
        return fired
    }

    /// A fired tick was dropped before its handler call (the timer was
    /// suspended meanwhile): it and the ticks it reported missed count as
    /// missed on the next tick that fires. Returns false, changing nothing,
    /// when a later tick has fired since (a handler that advanced a virtual
    /// clock collected it while this one waited): the caller then carries
    /// the count to the next tick delivered.
    @discardableResult
    mutating func drop(firedTick index: Int64, missed: Int64) -> Bool {
        guard lastFiredIndex == index else { return false }
        lastFiredIndex = index &- missed &- 1
        return true
    }

    /// A suspended timer resumes at `now`. Ticks that fell due meanwhile are one
    /// fire, never a burst: a `.burst` grid jumps to the latest due tick (the
    /// fire reports the rest as missed); `.skip` does so when it fires.
    mutating func resume(at now: Int64, policy: MissedTickPolicy) {
        guard policy == .burst, isRepeating, nextDeadline < now else { return }
        moveTo(tick: latestDueIndex(at: now))
    }

    /// A new period: the pending tick keeps its deadline, later ticks follow the
    /// new interval from there.
    mutating func setPeriod(_ newPeriod: Period) {
        anchor(tick: nextIndex, at: nextDeadline)
        period = newPeriod
        moveTo(tick: nextIndex)
    }

    /// A new period from tick `k` on, which fired at `deadline`: tick `k + 1` is
    /// one new period after it (what a handler of tick `k` asks for). The
    /// pending tick, if it is still `k + 1` or later, moves onto the new grid.
    mutating func setPeriod(_ newPeriod: Period, fromTick k: Int64, at deadline: Int64) {
        anchor(tick: k, at: deadline)
        period = newPeriod
        moveTo(tick: Swift.max(nextIndex, k.saturatingAdd(1)))
    }

    /// The pending tick moves to `deadline`; the grid continues from there with
    /// the same interval.
    mutating func moveNextTick(to deadline: Int64) {
        anchor(tick: nextIndex, at: deadline)
        moveTo(tick: nextIndex)
    }

    /// Tick `k` moves to `deadline` and the grid continues from there; the
    /// pending tick, if it is `k` or later, moves with it.
    mutating func moveTick(_ k: Int64, to deadline: Int64) {
        anchor(tick: k, at: deadline)
        moveTo(tick: Swift.max(nextIndex, k))
    }

    @inline(__always)
    private mutating func anchor(tick k: Int64, at instant: Int64) {
        origin = instant
        originIndex = k
    }

    @inline(__always)
    private mutating func moveTo(tick k: Int64) {
        nextIndex = k
    }
}
