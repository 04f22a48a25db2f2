import Dispatch

/// One firing of a timer, as its handler receives it.
public struct Tick: Sendable {
    /// The tick's index on the timer's grid: tick `k` of a repeating timer is due
    /// at `start + k × interval`. A one-shot timer fires tick 0.
    public let index: Int64
    /// The instant the tick was scheduled for.
    public let deadline: PrecisionClock.Instant
    /// The instant the handler was called (read just before the call).
    public let firedAt: PrecisionClock.Instant
    /// Grid ticks since the previous fire that got no handler call of their own
    /// (0 when the timer keeps up). See ``MissedTickPolicy``.
    public let missed: Int64
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

    init(index: Int64, deadline: PrecisionClock.Instant, firedAt: PrecisionClock.Instant, missed: Int64,
         isManual: Bool, node: TimerNode, period: Period = .zero, epoch: UInt32 = 0) {
        self.epoch = epoch
        self.index = index
        self.deadline = deadline
        self.firedAt = firedAt
        self.missed = missed
        self.isManual = isManual
        self.node = node
        self.period = period
    }

    /// How late the handler was called, in nanoseconds (never negative for a
    /// scheduled tick).
    package var latenessNanoseconds: Int64 { firedAt.nanoseconds.saturatingSubtract(deadline.nanoseconds) }

    /// How late the handler was called.
    public var lateness: Duration { deadline.duration(to: firedAt) }

    /// Cancels the timer this tick came from: ``ScheduledTimer/cancel()`` without
    /// needing a reference to the timer in the handler (which would keep it
    /// alive). Inside the handler it stops further ticks and returns at once;
    /// elsewhere it returns once no handler call of the timer is running.
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
