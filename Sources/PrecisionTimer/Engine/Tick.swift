import Dispatch

/// One firing of a timer, as its handler receives it.
public struct Tick: Sendable {
    /// The tick's index on the timer's grid: tick `k` of a repeating timer is due
    /// at `start + k × interval`. A one-shot timer fires tick 0.
    public let index: Int
    /// The instant the tick was scheduled for.
    public let deadline: PrecisionClock.Instant
    /// The instant the handler was called (read just before the call).
    public internal(set) var firedAt: PrecisionClock.Instant
    /// Grid ticks since the previous fire that got no handler call of their own
    /// (0 when the timer keeps up). See ``MissedTickPolicy``.
    public internal(set) var missed: Int
    /// True for a fire requested with ``ScheduledTimer/fire()``: it runs the
    /// handler without moving the grid; `index` is the next grid tick's.
    public let isManual: Bool

    let node: TimerNode
    /// The timer's period when this tick was collected (0 for a one-shot):
    /// what a ``FrameLink`` reports as the frame duration.
    var period: Period = .zero
    /// The timer's suspend epoch when the tick was collected: a tick from
    /// before a suspend is dropped, not delivered.
    var epoch: UInt32 = 0
    /// The timer's count of withdrawn prepared ticks when this tick was
    /// collected (see ``TimerNode/withdrawals``).
    var withdrawals: UInt32 = 0
    /// The timer's next deadline on its grid right after this tick was
    /// collected (for a ``FrameLink``, the next frame's time).
    var nextDeadline: Int64 = .max

    init(index: Int64, deadline: PrecisionClock.Instant, firedAt: PrecisionClock.Instant, missed: Int64,
         isManual: Bool, node: TimerNode, period: Period = .zero, epoch: UInt32 = 0) {
        self.epoch = epoch
        self.index = Int(index)
        self.deadline = deadline
        self.firedAt = firedAt
        self.missed = Int(missed)
        self.isManual = isManual
        self.node = node
        self.period = period
    }

    /// How late the handler was called, in nanoseconds (never negative for a
    /// scheduled tick).
    package var latenessNanoseconds: Int64 { firedAt.nanoseconds.saturatingSubtract(deadline.nanoseconds) }

    /// How late the handler was called.
    public var lateness: Duration { deadline.duration(to: firedAt) }

    /// Changes the period of the timer this tick came from, starting right after
    /// this tick: called in the handler of tick `k`, tick `k + 1` is due one new
    /// interval after tick `k`'s deadline (not yet in flight, it moves), and the
    /// grid continues from there. Called later, or from another thread, the grid
    /// is still re-anchored at this tick; the timer's pending tick moves onto that
    /// grid unless it is already delivered. On a one-shot, or for a tick of
    /// ``ScheduledTimer/fire()`` (off the grid), it acts as ``RepeatingTimer/setInterval(_:)-(Duration)``
    /// where that applies, and does nothing on a one-shot.
    /// - Precondition: `interval` is positive (as for the factories).
    public func setInterval(_ interval: Duration) {
        setPeriod(TimerInterval.period(every: interval, #function))
    }

    /// ``setInterval(_:)-(Duration)`` with a checked interval: it cannot trap.
    public func setInterval(_ interval: TimerInterval) {
        setPeriod(interval.period)
    }

    /// Changes the rate of the timer this tick came from to `count` ticks per
    /// `span`, exactly (as ``RepeatingTimer/setRate(ticks:per:)``), starting
    /// right after this tick, as ``setInterval(_:)-(Duration)`` does: a MIDI clock's
    /// handler that follows a tempo change.
    /// - Precondition: `count` in 1 … 9,223,372,036 and `span` positive (as for
    ///   the factories).
    public func setRate(ticks count: Int, per span: Duration) {
        setPeriod(TimerInterval.period(ticks: count, per: span, #function))
    }

    /// The new period from this tick on (see ``setInterval(_:)``).
    func setPeriod(_ period: Period) {
        node.engine.setPeriod(node, period, from: isManual ? nil : (Int64(index), deadline.nanoseconds))
    }

    /// Moves the tick after this one (tick `k + 1`, from the handler of tick
    /// `k`) to `deadline`; the grid continues from there with the same interval.
    /// Called later, from a tick kept past its handler, it still anchors tick
    /// `k + 1` at `deadline`, so the timer's pending tick `p` lands at
    /// `deadline + (p − k − 1) × interval`; to move the pending tick itself, call
    /// ``RepeatingTimer/setNextDeadline(_:)``.
    /// ``PrecisionClock/Instant/max`` means "never" (until moved again). For a
    /// tick of ``ScheduledTimer/fire()``, it moves the timer's pending tick, as
    /// ``RepeatingTimer/setNextDeadline(_:)``. Does nothing on a one-shot.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` for a deadline more
    ///   than 2^62 ns before now: a deadline is computed at run time, so it is
    ///   checked by throwing (the timer is then unchanged).
    public func setNextDeadline(_ deadline: PrecisionClock.Instant) throws {
        guard deadline.nanoseconds >= node.now.saturatingSubtract(TimerEngine.maximumLookBack)
        else { throw PrecisionTimerError.deadlineOutOfRange }
        node.engine.moveTick(node, isManual ? nil : Int64(index).saturatingAdd(1), to: deadline.nanoseconds)
    }

    /// Cancels the timer this tick came from: ``ScheduledTimer/cancel()`` without
    /// needing a reference to the timer in the handler (which would keep it
    /// alive). Inside the handler it stops further ticks and returns at once;
    /// elsewhere it returns once no handler call of the timer is running. On a
    /// one-shot that has fired, it ends the timer: its handler and everything
    /// the handler captured go once the call returns.
    public func cancelTimer() {
        node.cancel(waitingForHandler: true)
    }
}

/// What a repeating timer does when ticks fall due while it cannot fire (the
/// machine stalled, or the previous handler overran).
public enum MissedTickPolicy: Sendable, Hashable {
    /// Fire once for the latest tick that is due, report the others in
    /// ``Tick/missed``, and continue on the original grid (what NSTimer and GCD
    /// do). The default.
    case skip
    /// Fire every missed tick, back to back, then continue on the grid (Java's
    /// fixed-rate scheduling).
    case burst
    /// Fixed delay, like SwiftNIO's repeated task: each fire re-anchors the grid,
    /// so the next tick is due one interval after the instant this one fired.
    /// Lateness accumulates by design.
    case delay
}

/// Where a timer's handler runs.
public enum TimerDelivery: Sendable {
    /// On the scheduler's own thread: the lowest jitter. Handlers must be short
    /// and must not block: every other timer of that scheduler waits for them.
    case inline
    /// Asynchronously on a dispatch queue (`.main` for the main queue). Adds the
    /// queue's hand-off latency; the handler may take longer.
    case queue(DispatchQueue)

    /// The main queue.
    public static var main: TimerDelivery { .queue(.main) }
}
