import Dispatch
#if DEBUG
import Synchronization
#endif

/// The engine's record of one timer. Every mutable field is guarded by the
/// owning engine's lock (hence `@unchecked Sendable`); the public handles
/// (``RepeatingTimer``, ``OneShotTimer``) only forward to the engine.
final class TimerNode: @unchecked Sendable {
    enum State: UInt8 {
        /// Made, not started yet. Cancelling it here makes a later start a no-op.
        case idle
        /// Queued and waiting for its next deadline (or, with ``inFlight``, off
        /// the queue until its queued delivery has run).
        case scheduled
        /// Off the queue until resumed; the grid is kept.
        case suspended
        /// A one-shot that has fired. Terminal.
        case done
        /// Cancelled. Terminal.
        case cancelled
    }

    /// The work. The stoppable form returns false to cancel the timer (the
    /// weak-owner form, when the owner is gone). Two cases rather than one
    /// wrapping closure: no extra allocation per timer.
    enum Handler: Sendable {
        case plain(@Sendable (Tick) -> Void)
        case stoppable(@Sendable (Tick) -> Bool)

        /// Runs the work; false means "cancel me".
        @inline(__always)
        func callAsFunction(_ tick: Tick) -> Bool {
            switch self {
            case .plain(let body):
                body(tick)
                return true
            case .stoppable(let body):
                return body(tick)
            }
        }
    }

    // Stored properties are ordered widest first so the node packs into a
    // 128-byte heap block: with 100,000 timers every byte counts.
    let engine: TimerEngine
    let delivery: TimerDelivery

    // Schedule (all nanoseconds of `source`). Tick k is due at
    // gridOrigin + (k - gridOriginIndex) * interval; interval 0 marks a one-shot.
    var interval: Int64
    var leeway: Int64
    /// Where tick `gridOriginIndex` of the current grid is due (both move when
    /// the grid is re-anchored, so no product of a large index and an interval
    /// is ever formed for a re-anchored grid).
    var gridOrigin: Int64
    var gridOriginIndex: Int64 = 0
    /// The index of the tick due at `deadline`.
    var nextIndex: Int64 = 0
    var lastFiredIndex: Int64 = -1
    /// Grid ticks collected but dropped before their handler call (the timer was
    /// suspended meanwhile): added to the `missed` of the next tick delivered.
    var carriedMissed: Int64 = 0
    var deadline: Int64
    /// Nil once the timer can never fire again, which releases what it captured.
    var handler: Handler?

    // Engine bookkeeping.
    var deadlineSlot: Int32 = -1
    var latestSlot: Int32 = -1
    /// Handler calls of this timer running now (more than one only when a
    /// concurrent dispatch queue delivers).
    var runningCount: Int32 = 0
    /// Bumped by every suspend: a tick collected before it carries the old value
    /// and is dropped instead of delivered.
    var epoch: UInt32 = 0
    let source: PrecisionClock.Source
    let policy: MissedTickPolicy
    var state: State = .idle
    /// A queue-delivered grid tick is outstanding: the node stays off its queue
    /// until that delivery has run (or been dropped), so at most one tick per
    /// timer is in flight and a slow handler folds ticks by the policy.
    var inFlight = false

    /// The latest acceptable instant: deadline + leeway (computed, not stored).
    var latest: Int64 { deadline.saturatingAdd(leeway) }

    init(engine: TimerEngine, source: PrecisionClock.Source, deadline: Int64, interval: Int64,
         leeway: Int64, policy: MissedTickPolicy, delivery: TimerDelivery, handler: Handler) {
        self.engine = engine
        self.source = source
        self.delivery = delivery
        self.policy = policy
        self.interval = interval
        self.leeway = leeway
        self.gridOrigin = deadline
        self.deadline = deadline
        self.handler = handler
        #if DEBUG
        Self.instances.add(1, ordering: .relaxed)
        #endif
    }

    #if DEBUG
    /// Timer nodes alive in this process (debug builds only): the stress test
    /// counts them to prove no timer outlives its cancellation.
    static let instances = Atomic<Int>(0)

    deinit {
        Self.instances.subtract(1, ordering: .relaxed)
    }
    #endif

    var isRepeating: Bool { interval > 0 }

    /// The deadline of grid tick `k`, saturating (a deadline past the end of the
    /// clock's range is "never").
    @inline(__always)
    func deadline(ofTick k: Int64) -> Int64 {
        gridOrigin.saturatingAdd(k.saturatingSubtract(gridOriginIndex).saturatingMultiply(interval))
    }

    /// Re-anchors the grid so tick `k` is due at `instant`: exact for any `k`.
    @inline(__always)
    func anchor(tick k: Int64, at instant: Int64) {
        gridOrigin = instant
        gridOriginIndex = k
    }

    /// Moves the pending tick to `k`.
    @inline(__always)
    func setNextTick(_ k: Int64) {
        nextIndex = k
        deadline = deadline(ofTick: k)
    }
}
