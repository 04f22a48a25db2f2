/// What every timer handle can do. Every call is safe from any thread, never
/// waits where waiting could deadlock (on a scheduler's thread, or inside any
/// timer's handler), and is deterministic:
///
/// - ``cancel()`` is synchronous: when it returns, no handler call of the timer
///   starts again, and (called from an ordinary thread) none is running. Called
///   where waiting could deadlock — inside any timer's handler, or on a
///   scheduler's thread (a deinit that runs there) — it returns at once: no new
///   call starts, and a call running on another thread finishes on its own.
/// - ``suspend()`` is as synchronous as ``cancel()``: once it returns, no handler
///   call starts until ``resume()``; ticks already collected or waiting on a
///   delivery queue are dropped and reported as missed after the resume, and a
///   ``fire()`` asked for before the suspend that has not begun is dropped
///   (a suspend of a timer already suspended drops one asked for since).
///   ``suspend()`` and ``resume()`` are idempotent; releasing a suspended timer
///   is fine (it is simply cancelled).
/// - Releasing the last reference to a timer cancels it without waiting (a
///   release can happen anywhere: inside a handler, in a deinit on the
///   scheduler's thread, under a lock of yours): no new handler call starts; a
///   call already running finishes, then lets go of what it captured. No timer
///   outlives everything that refers to it.
/// - After ``cancel()``, every call is a documented no-op.
public protocol ScheduledTimer: AnyObject, Sendable {
    /// Stops the timer for good; see the protocol's notes on synchronicity.
    func cancel()
    /// Takes the timer off the schedule until ``resume()``; the grid is kept.
    func suspend()
    /// Puts a suspended timer back. Ticks that fell due while suspended are
    /// reported as missed (one fire, never a burst).
    func resume()
    /// Runs the handler as soon as possible, where it is delivered; the tick has
    /// ``Tick/isManual`` set. A repeating timer keeps its grid (the scheduled
    /// ticks still come); a one-shot fires now *instead of* at its deadline and
    /// is then done, as `Timer.fire()` does with a non-repeating timer. Calls on
    /// a cancelled or fired timer do nothing; calls made before the requested
    /// fire has run merge with it on a one-shot (on a repeating timer each call
    /// is one handler call, unless a ``suspend()`` comes before it begins). A
    /// suspended timer fires too: a repeating one stays suspended, a one-shot
    /// is done once that call begins (and suspended until then). On a virtual
    /// scheduler it runs at the next ``VirtualClock/advance(by:)-9eb22``.
    func fire()
    /// True once cancelled (by ``cancel()``, release, or a weak owner's death).
    var isCancelled: Bool { get }
    /// True while suspended.
    var isSuspended: Bool { get }
}

/// A timer that fires once. See ``ScheduledTimer`` for its lifecycle.
public final class OneShotTimer: ScheduledTimer {
    let node: TimerNode

    init(node: TimerNode) {
        self.node = node
    }

    deinit {
        node.cancel(waitingForHandler: false)
    }

    /// Stops the timer for good; synchronous, as ``ScheduledTimer/cancel()``
    /// describes. A timer that has already fired stays fired; cancel lets go of
    /// the handler it kept for a ``reschedule(at:)``, and of what it captured.
    public func cancel() { node.cancel(waitingForHandler: true) }
    /// Takes the timer off the schedule until ``resume()``; its deadline is kept.
    /// Synchronous: once it returns, the handler does not start until
    /// ``resume()``, even if the timer was already collected for its deadline.
    /// No-op unless it is scheduled (or collected and not yet called).
    public func suspend() { node.suspend() }
    /// Puts a suspended timer back on its deadline; a deadline that passed while
    /// suspended fires at once. No-op unless it is suspended.
    public func resume() { node.resume() }
    /// Fires the timer now *instead of* at its deadline (as `Timer.fire()` does
    /// with a non-repeating timer): the handler runs once, where it is
    /// delivered, with ``Tick/isManual`` set, and the timer is done. A
    /// ``reschedule(at:)`` before that call begins drops the fire, as it drops
    /// a fire collected for the old deadline: the timer then fires at the new
    /// deadline only.
    public func fire() { node.fire() }
    /// True once cancelled (by ``cancel()``, release, or the `owner:` form's
    /// owner gone at the deadline); a fired timer is not cancelled, see
    /// ``hasFired``.
    public var isCancelled: Bool { node.read { $0.state == .cancelled } }
    /// True while suspended (and until a ``fire()`` asked for while suspended
    /// has begun its call).
    public var isSuspended: Bool { node.read { $0.readsSuspended } }

    /// True once the handler has been called for the current deadline, and
    /// never before that call begins (not while the scheduler spins toward the
    /// deadline, nor while the fire waits on its delivery queue). A
    /// ``reschedule(at:)`` makes it false again until the timer fires again.
    public var hasFired: Bool { node.read { $0.state == .done } }

    /// The deadline, on the timer's clock.
    public var deadline: PrecisionClock.Instant { node.read { .init(nanoseconds: $0.deadline) } }

    /// Arms the timer for `deadline`, in place: the same handle, no new timer,
    /// no allocation (what `schedule(deadline:)` does for a Dispatch source, or
    /// tokio's `Sleep::reset`). The idle timeout's move: push it back at each
    /// read.
    ///
    /// - A pending timer moves to `deadline`.
    /// - A suspended one keeps `deadline` for its ``resume()``.
    /// - One that has fired is armed again: it fires again at `deadline`
    ///   (``hasFired`` is false until then). A fire that has not begun is
    ///   dropped, not delivered: one collected for the old deadline, and one
    ///   asked for by ``fire()``.
    /// - After ``cancel()``, or once released, it does nothing; nor does it arm
    ///   a fired timer again once its ``TimerScheduler`` has been released (the
    ///   scheduler's thread ends when no timer is live): it stays fired.
    ///
    /// Any deadline is accepted: a past one fires as soon as possible,
    /// ``PrecisionClock/Instant/max`` means "never" (until rescheduled). Safe from
    /// any thread, the timer's own handler included (a handler that reschedules
    /// its timer makes a one-shot that repeats on a schedule of its own).
    public func reschedule(at deadline: PrecisionClock.Instant) {
        node.rearm(at: deadline.nanoseconds)
    }

    /// Arms the timer for `delay` from now on its clock, in place; see
    /// ``reschedule(at:)``. Zero or negative fires as soon as possible; a delay
    /// past the clock's range means "never", as for
    /// ``TimerScheduler/schedule(after:clock:leeway:delivery:_:)``.
    public func reschedule(after delay: Duration) {
        let ns = max(0, delay.saturatingNanoseconds)  // rounded up: a negative delay gives at most 0
        node.rearm(at: node.now.saturatingAdd(ns))
    }
}

/// A drift-free repeating timer. See ``TimerScheduler/repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``
/// and ``ScheduledTimer`` for its lifecycle.
public final class RepeatingTimer: ScheduledTimer {
    let node: TimerNode

    init(node: TimerNode) {
        self.node = node
    }

    deinit {
        // Its lateness record, if any, goes with the handle: before the node can be freed.
        node.cancel(waitingForHandler: false, dropsLatenessRecord: true)
    }

    /// Stops the timer for good; synchronous, as ``ScheduledTimer/cancel()``
    /// describes.
    public func cancel() { node.cancel(waitingForHandler: true) }
    /// Takes the timer off the schedule until ``resume()``; the grid is kept.
    /// Synchronous: once it returns, no handler call starts until ``resume()``;
    /// ticks already collected (in the same wake-up, or waiting on a delivery
    /// queue) are dropped and counted in the ``Tick/missed`` of the first tick
    /// after the resume. No-op unless it is scheduled.
    public func suspend() { node.suspend() }
    /// Puts a suspended timer back on its grid. Ticks that fell due meanwhile
    /// are one fire, never a burst: with ``MissedTickPolicy/skip`` and
    /// ``MissedTickPolicy/burst`` its ``Tick/missed`` counts the others;
    /// ``MissedTickPolicy/delay`` re-anchors the grid at it. No-op unless it is
    /// suspended.
    public func resume() { node.resume() }
    /// Runs the handler once as soon as possible, where it is delivered, with
    /// ``Tick/isManual`` set; the grid does not move and the scheduled ticks
    /// still come (NSTimer's `fire()` on a repeating timer).
    public func fire() { node.fire() }
    /// True once cancelled (by ``cancel()``, release, ``Tick/cancelTimer()`` or a
    /// weak owner's death).
    public var isCancelled: Bool { node.read { $0.state == .cancelled } }
    /// True while suspended.
    public var isSuspended: Bool { node.read { $0.state == .suspended } }

    /// The period.
    public var interval: Duration { node.read { $0.period.duration } }

    /// How late each of this timer's scheduled fires began: its own
    /// ``LatencyHistogram``, kept when the timer was made with
    /// `recordsLateness: true` (nil otherwise). A copy; the scheduler's
    /// ``TimerScheduler/statistics`` record every timer's fires together.
    public var lateness: LatencyHistogram? { node.latenessHistogram }

    /// Empties the timer's own lateness histogram (nothing without one).
    public func resetLateness() { _ = node.engine.withLatenessRecord(of: node) { $0.reset() } }

    /// The leeway (clamped to 1 ns under the interval).
    public var leeway: Duration { node.read { .nanoseconds($0.leeway) } }

    /// The deadline of the next tick, on the timer's clock (nil once cancelled).
    /// A tick is next until its deadline, also while the scheduler spins
    /// toward it with the tick already prepared.
    public var nextDeadline: PrecisionClock.Instant? {
        node.engine.pendingDeadline(node).map { .init(nanoseconds: $0) }
    }

    /// Changes the period while running. The pending tick keeps its deadline; the
    /// ticks after it follow the new interval from there (the grid is re-anchored
    /// at the pending tick, exactly, however many ticks the timer has run). A
    /// leeway not under the new interval is clamped to 1 ns under it. An interval too large
    /// for `Int64` nanoseconds means the ticks after the pending one never come.
    /// After ``cancel()`` it does nothing (a bad interval still fails its precondition).
    /// - Precondition: `interval` is positive (as for the factories); a value
    ///   read at run time goes through ``TimerInterval``.
    public func setInterval(_ interval: Duration) {
        let period = TimerInterval.period(every: interval, #function)
        node.engine.setPeriod(node, period)
    }

    /// ``setInterval(_:)-(Duration)`` with a checked interval (one read at run
    /// time): it cannot trap.
    public func setInterval(_ interval: TimerInterval) {
        node.engine.setPeriod(node, interval.period)
    }

    /// Changes the rate to `count` ticks per `span`, exactly (see
    /// ``TimerScheduler/repeating(ticks:per:clock:leeway:policy:delivery:recordsLateness:_:)``);
    /// the pending tick keeps its deadline, as with ``setInterval(_:)-(Duration)``.
    /// - Precondition: `count` in 1 … 9,223,372,036 and `span` positive (as for
    ///   the factories), also after ``cancel()``.
    public func setRate(ticks count: Int, per span: Duration) {
        let period = TimerInterval.period(ticks: count, per: span, #function)
        node.engine.setPeriod(node, period)
    }

    /// Moves the next tick to `deadline` (NSTimer's `fireDate`); the grid
    /// continues from there with the same interval. A past deadline fires at once;
    /// ``PrecisionClock/Instant/max`` means "never" (until moved again).
    /// After ``cancel()`` it does nothing.
    ///
    /// A tick whose deadline has come is decided: one whose call has not begun
    /// yet (it waits behind another handler of the same wake-up, or on its
    /// delivery queue) still runs, and the tick after it moves. (A one-shot's
    /// ``OneShotTimer/reschedule(at:)`` drops such a fire instead: it has only
    /// the one.) A fire prepared ahead of a spin, whose deadline has not come,
    /// is the tick that moves.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` for a deadline more
    ///   than 2^62 ns (about 146 years) before now, as
    ///   ``TimerScheduler/repeating(every:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``
    ///   refuses such a start: a deadline is computed at run time, so it is
    ///   checked by throwing (the timer is then unchanged).
    public func setNextDeadline(_ deadline: PrecisionClock.Instant) throws {
        guard deadline.nanoseconds >= node.now.saturatingSubtract(TimerEngine.maximumLookBack)
        else { throw PrecisionTimerError.deadlineOutOfRange }
        node.engine.moveTick(node, nil, to: deadline.nanoseconds)
    }
}
