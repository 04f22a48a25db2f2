import Dispatch
#if DEBUG
import Synchronization
#endif

/// The engine's record of one timer.
///
/// Ground rules (what is touched by whom, under which lock):
/// - `engine`, `delivery`, `source` and the handler's type are set at creation
///   and never change.
/// - Every `var` is read and written only under the owning engine's lock
///   (`TimerEngine.state`), by whichever thread holds it: the scheduler thread
///   collecting and delivering, a thread calling a handle method, a dispatch
///   queue running a delivery. Hence `@unchecked Sendable`.
/// - `deadlineSlot` / `latestSlot` (its places in the heaps, -1 once it
///   leaves them one at a time), `prev` / `next` / `filedAt` / `listed` (its
///   place in the wheel or the run) and `sequence` belong to the queue the
///   node is on; only `TimerQueue` and what it is made of change them. The
///   slots and `filedAt` share one word: the slots mean something only while
///   the node is in the heaps, `filedAt` only while it is `listed`, and
///   neither is a test of where the node is (`listed` and the heaps'
///   identity checks are).
/// - A node is on its clock's queue exactly when `state == .scheduled` and
///   `!inFlight`; the queue then holds one retain on it.
/// - The engine's `live` count is the number of nodes in `.scheduled`,
///   `.suspended` or `.collected`: a one-shot stops being live when its
///   handler call begins, not when it is collected.
/// - `handler` is cleared under the lock when the timer can never fire again;
///   the caller releases the closure after unlocking, since that may run any
///   deinit. A running call holds its own reference until its end is recorded.
/// - The public handles (``RepeatingTimer``, ``OneShotTimer``) forward to the
///   node's methods at the end of this file, which lock the engine.
final class TimerNode: @unchecked Sendable {
    enum State: UInt8 {
        /// Made, not started yet. Cancelling it here makes a later start a no-op.
        case idle
        /// Queued and waiting for its next deadline (or, with ``inFlight``, off
        /// the queue until its queued delivery has run).
        case scheduled
        /// Off the queue until resumed; the grid is kept.
        case suspended
        /// A one-shot taken off its queue for its fire (at its deadline, ahead
        /// of a spin, or by ``ScheduledTimer/fire()``) whose handler call has
        /// not begun: still live, not yet fired.
        case collected
        /// A one-shot whose handler call has begun. It keeps its handler while
        /// its handle lives, so ``OneShotTimer/reschedule(at:)`` can arm it
        /// again; a cancel or release lets go of the handler, after which it is
        /// terminal.
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
        /// Resumes a task that will run on this engine's own thread, as a job
        /// (an async sleep registered there). Its only effect is to queue that
        /// job, which the thread runs after the deadline; so a spin that
        /// prepared this fire calls it at the spin's start, taking the Swift
        /// runtime's resumption off the path from the deadline to the task.
        case resumesTaskHere(@Sendable (Tick) -> Void)

        /// Whether this is a ``resumesTaskHere`` handler.
        var resumesTaskHere: Bool {
            if case .resumesTaskHere = self { true } else { false }
        }

        /// Runs the work; false means "cancel me".
        @inline(__always)
        func callAsFunction(_ tick: Tick) -> Bool {
            switch self {
            case .plain(let body), .resumesTaskHere(let body):
                body(tick)
                return true
            case .stoppable(let body):
                return body(tick)
            }
        }
    }

    // The stored properties, in this order, take 104 bytes with the object's
    // header: what a live timer costs, with a million of them, besides its
    // handle. `handler` (two words and a case tag) is followed by the small
    // fields that fill the rest of its last word; what is rare (a repeating
    // timer's grid, a delivery queue) lives in a box of its own. What never
    // changes (`kind`, `extras`) is apart from what does (`bits`), so that it
    // can be read without the lock.
    let engine: TimerEngine
    /// The pending tick's deadline, in nanoseconds of `source`: a one-shot's
    /// whole schedule, and a repeating timer's `grid.nextDeadline` (the
    /// setter of ``grid`` keeps the two in step).
    private(set) var deadline: Int64
    /// A repeating timer's grid and a delivery queue, when it has either;
    /// nil for an inline one-shot.
    private let extras: NodeExtras?
    /// How late past a deadline the timer may fire (coalescing), ns.
    var leeway: Int64
    /// Nil once the timer can never fire again, which releases what it captured.
    var handler: Handler?
    /// `state` in the low 3 bits, then the flags `inFlight` (on a one-shot:
    /// `suspendedBeforeFire`), `recordsLateness`, `listed`, `isRunning` and
    /// `isPrepared`. Under the lock.
    private var bits: UInt8 = 0
    /// Set at creation, never changed: the clock (2 bits), the missed-tick
    /// policy (2 bits), repeating, delivered on a queue.
    private let kind: UInt8
    /// Bumped by every suspend, and on a one-shot whenever a fire it owes is
    /// dropped (a prepared fire taken back; a reschedule of one collected, or
    /// asked for by `fire()` and not yet collected): a tick collected, or a
    /// fire requested, before it carries the old value and is dropped instead
    /// of delivered.
    var epoch: UInt32 = 0

    // Engine bookkeeping.
    /// Links of the wheel slot or run the node waits in (see ``NodeList``).
    var prev: Unmanaged<TimerNode>?
    var next: Unmanaged<TimerNode>?
    /// Its place among same-instant timers: taken at every (re)schedule.
    var sequence: UInt64 = 0
    /// Where the node waits besides its links: on a list (`listed`), the
    /// deadline it was filed under (``filedAt``); in the heaps, its two slots
    /// (``deadlineSlot``, ``latestSlot``). A node is never in both places, so
    /// the two share this word; which one holds follows from `listed`.
    private var place: Int64 = -1

    private static let stateMask: UInt8 = 7
    private static let inFlightBit: UInt8 = 8
    private static let recordsLatenessBit: UInt8 = 16
    private static let listedBit: UInt8 = 32
    private static let runningBit: UInt8 = 64
    private static let preparedBit: UInt8 = 128
    private static let repeatingKind: UInt8 = 16
    private static let queuedKind: UInt8 = 32

    var state: State {
        @inline(__always) get { State(rawValue: bits & Self.stateMask).unsafelyUnwrapped }
        @inline(__always) set { bits = bits & ~Self.stateMask | newValue.rawValue }
    }

    /// The clock the deadlines are in nanoseconds of.
    var source: PrecisionClock.Source {
        @inline(__always) get { PrecisionClock.Source(rawValue: Int(kind & 3)).unsafelyUnwrapped }
    }

    var policy: MissedTickPolicy {
        switch (kind >> 2) & 3 {
        case 0: .skip
        case 1: .burst
        default: .delay
        }
    }

    /// Where the handler runs.
    var delivery: TimerDelivery {
        @inline(__always) get { kind & Self.queuedKind != 0 ? extras.unsafelyUnwrapped.delivery : .inline }
    }

    /// The deadline the node was filed under in the wheel (its slot follows
    /// from it); a move to a later deadline in place leaves it. Meaningful
    /// only while the node is `listed`.
    var filedAt: Int64 {
        @inline(__always) get { place }
        @inline(__always) set { place = newValue }
    }
    /// The node's index in its queue's heap of deadlines while it is there
    /// (not `listed`); anything else at other times.
    var deadlineSlot: Int32 {
        @inline(__always) get { Int32(truncatingIfNeeded: place) }
        @inline(__always) set { place = place & ~0xFFFF_FFFF | Int64(UInt32(bitPattern: newValue)) }
    }
    /// The node's index in its queue's heap of latest instants while it is
    /// there (not `listed`); anything else at other times.
    var latestSlot: Int32 {
        @inline(__always) get { Int32(truncatingIfNeeded: place >> 32) }
        @inline(__always) set { place = place & 0xFFFF_FFFF | Int64(newValue) << 32 }
    }
    /// A handler call of this timer is running. More than one at once (a
    /// concurrent dispatch queue delivering, a handler advancing a virtual
    /// clock that fires the same timer again) is rare: the calls past the
    /// first are counted in the engine's `extraCalls` (see
    /// ``TimerEngine/beginCallLocked(_:_:)``).
    var isRunning: Bool {
        @inline(__always) get { bits & Self.runningBit != 0 }
        @inline(__always) set { bits = newValue ? bits | Self.runningBit : bits & ~Self.runningBit }
    }

    /// A grid tick is outstanding on a delivery queue, or prepared ahead of a
    /// spin: the node stays off its queue until that tick has been delivered or
    /// dropped, so at most one tick per timer is in flight and its next tick
    /// cannot overtake it.
    /// Always false on a one-shot, whose bit is ``suspendedBeforeFire``.
    var inFlight: Bool {
        @inline(__always) get { isRepeating && bits & Self.inFlightBit != 0 }
        @inline(__always) set {
            guard isRepeating else { return }
            bits = newValue ? bits | Self.inFlightBit : bits & ~Self.inFlightBit
        }
    }
    /// A one-shot `.collected` for a ``ScheduledTimer/fire()`` asked for while
    /// it was suspended: if that fire is dropped before its call begins (by a
    /// reschedule), the timer is suspended again, and it reads as suspended
    /// until then. The bit a repeating timer uses for ``inFlight``: a one-shot
    /// is never in flight, and each accessor sees the bit only for its kind.
    var suspendedBeforeFire: Bool {
        @inline(__always) get { !isRepeating && bits & Self.inFlightBit != 0 }
        @inline(__always) set {
            guard !isRepeating else { return }
            bits = newValue ? bits | Self.inFlightBit : bits & ~Self.inFlightBit
        }
    }
    /// Suspended, as the handle reads it: a one-shot whose ``ScheduledTimer/fire()``
    /// was asked for while suspended still is until that call begins.
    var readsSuspended: Bool {
        state == .suspended || (state == .collected && suspendedBeforeFire)
    }
    /// The timer's pending fire was collected ahead of a spin to its deadline
    /// (prepared) and its handler call has not begun: a one-shot `.collected`,
    /// or a repeating timer `.scheduled` and in flight, whose grid has moved
    /// on (``gridBeforePrepared`` keeps it as it was). Until the deadline the
    /// fire has not happened: an operation on the timer takes it back first
    /// (see ``TimerEngine/withdrawPreparedLocked(_:_:)``).
    var isPrepared: Bool {
        @inline(__always) get { bits & Self.preparedBit != 0 }
        @inline(__always) set { bits = newValue ? bits | Self.preparedBit : bits & ~Self.preparedBit }
    }
    /// A repeating timer's grid as it was before its prepared fire
    /// (meaningful only while ``isPrepared``).
    var gridBeforePrepared: Grid {
        get { extras.unsafelyUnwrapped.gridBeforePrepared }
        set { extras.unsafelyUnwrapped.gridBeforePrepared = newValue }
    }
    /// Ticks of this repeating timer dropped (suspended before their call)
    /// while a later tick of it had already been collected, each with the
    /// ticks it reported missed: the next tick delivered reports them in
    /// ``Tick/missed``. (A dropped tick that is the last collected is taken
    /// back by its grid instead; see ``Grid/drop(firedTick:missed:)``.)
    var droppedMissed: Int64 {
        get { extras.unsafelyUnwrapped.droppedMissed }
        set { extras.unsafelyUnwrapped.droppedMissed = newValue }
    }
    /// How many prepared ticks of this repeating timer were withdrawn (0 for a
    /// one-shot): a tick carries the count of its collection, and one taken
    /// back since is inert when its turn comes (see ``TimerEngine/isWithdrawn(_:)``).
    var withdrawals: UInt32 {
        @inline(__always) get { isRepeating ? extras.unsafelyUnwrapped.withdrawals : 0 }
        set { extras.unsafelyUnwrapped.withdrawals = newValue }
    }
    /// The timer keeps a lateness histogram of its own, in the engine's
    /// `latenessRecords` (a flag here rather than a reference in the node).
    var recordsLateness: Bool {
        @inline(__always) get { bits & Self.recordsLatenessBit != 0 }
        @inline(__always) set { bits = newValue ? bits | Self.recordsLatenessBit : bits & ~Self.recordsLatenessBit }
    }

    /// Queued on a list (a wheel slot or the run) rather than in the heaps.
    var listed: Bool {
        @inline(__always) get { bits & Self.listedBit != 0 }
        @inline(__always) set { bits = newValue ? bits | Self.listedBit : bits & ~Self.listedBit }
    }

    /// The timer's lateness histogram (a copy), if it keeps one.
    var latenessHistogram: LatencyHistogram? {
        engine.withLatenessRecord(of: self) { $0 }
    }

    /// The schedule, in nanoseconds of `source`. A one-shot's is
    /// `Grid(firstDeadline: deadline, period: .zero)`: no operation changes
    /// anything else of a grid with a zero period, so nothing else is stored.
    /// A timer never changes kind: a repeating one's period is never zero.
    var grid: Grid {
        @inline(__always) get {
            isRepeating ? extras.unsafelyUnwrapped.grid : Grid(firstDeadline: deadline, period: .zero)
        }
        set {
            assert(newValue.isRepeating == isRepeating, "PrecisionTimer: a timer changed kind")
            deadline = newValue.nextDeadline
            if isRepeating { extras.unsafelyUnwrapped.grid = newValue }
        }
    }

    /// The latest acceptable instant: deadline + leeway (computed, not stored).
    @inline(__always) var latest: Int64 { deadline.saturatingAdd(leeway) }
    @inline(__always) var isRepeating: Bool { kind & Self.repeatingKind != 0 }
    @inline(__always) var period: Period { isRepeating ? grid.period : .zero }

    init(engine: TimerEngine, source: PrecisionClock.Source, deadline: Int64, period: Period,
         leeway: Int64, policy: MissedTickPolicy, delivery: TimerDelivery, handler: Handler) {
        self.engine = engine
        let grid = Grid(firstDeadline: deadline, period: period)
        self.deadline = grid.nextDeadline
        let policyBits: UInt8 = switch policy {
        case .skip: 0
        case .burst: 1
        case .delay: 2
        }
        let queued: Bool
        if case .inline = delivery { queued = false } else { queued = true }
        kind = UInt8(source.rawValue) | policyBits << 2 | (grid.isRepeating ? Self.repeatingKind : 0)
            | (queued ? Self.queuedKind : 0)
        extras = grid.isRepeating || queued ? NodeExtras(grid: grid, delivery: delivery) : nil
        self.leeway = leeway
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

    /// A new period (under the engine's lock, off the queue): the pending tick
    /// keeps its deadline, or, `from` a fired tick, the grid restarts there; a
    /// leeway not under the new period is clamped to its `leewayLimit`.
    func setPeriod(_ period: Period, from tick: (index: Int64, deadline: Int64)? = nil) {
        if let tick {
            grid.setPeriod(period, fromTick: tick.index, at: tick.deadline)
        } else {
            grid.setPeriod(period)
        }
        leeway = Swift.min(leeway, period.leewayLimit)
    }

    // MARK: - What the handles call (each locks the engine)

    /// Cancels the timer; see ``TimerEngine/cancel(_:waitForHandler:)``.
    func cancel(waitingForHandler wait: Bool, dropsLatenessRecord: Bool = false) {
        engine.cancel(self, waitForHandler: wait, dropsLatenessRecord: dropsLatenessRecord)
    }
    func suspend() { engine.suspend(self) }
    func resume() { engine.resume(self) }
    func fire() { engine.fireNow(self) }
    /// Arms a one-shot again for `deadline`; see ``TimerEngine/rearm(_:at:)``.
    @discardableResult
    func rearm(at deadline: Int64, revivesFired: Bool = true) -> Bool {
        engine.rearm(self, at: deadline, revivesFired: revivesFired)
    }
    /// Reads fields under the engine's lock.
    func read<T: Sendable>(_ body: (TimerNode) -> T) -> T { engine.read(self, body) }
    /// The current reading of the timer's clock (virtual under a VirtualClock).
    var now: Int64 { engine.now(source) }
}

/// What few timers have, apart from their node so that an inline one-shot
/// (whose schedule is a single deadline) carries none of it: a repeating
/// timer's grid, a delivery queue. Made with the node, never replaced;
/// `grid` (a repeating timer's only) is touched through ``TimerNode/grid``,
/// under the engine's lock.
final class NodeExtras {
    var grid: Grid
    let delivery: TimerDelivery
    /// The grid before a fire prepared ahead of a spin (see
    /// ``TimerNode/isPrepared``).
    var gridBeforePrepared: Grid
    /// Prepared ticks withdrawn (see ``TimerNode/withdrawals``).
    var withdrawals: UInt32 = 0
    /// Missed ticks of dropped ticks the grid could not take back (see
    /// ``TimerNode/droppedMissed``).
    var droppedMissed: Int64 = 0

    init(grid: Grid, delivery: TimerDelivery) {
        self.grid = grid
        self.delivery = delivery
        gridBeforePrepared = grid
    }
}
