import CMonoClock
import DequeModule
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The engine's state and its lifecycle operations (start, cancel, suspend,
// resume, fire, reschedule). Collecting and delivering are in
// TimerEngine+Delivery.swift, the thread in TimerEngine+Thread.swift, the wait
// plan in WaitPlan.swift, Swift concurrency jobs in TimerEngine+Jobs.swift,
// async sleep in TimerEngine+Sleep.swift and the early resumption of sleeps in
// TimerEngine+EarlyResume.swift.
//
// Ground rules (every file of the engine keeps them):
//
// 1. One lock, `state` (a `Locked` around `EngineState`), guards the queues,
//    the job queue, the counters and every `var` of every `TimerNode` of this
//    engine (see TimerNode.swift for the node's own rules). Whoever holds it
//    may be any thread: the engine thread collecting and delivering, a thread
//    calling a handle method, a dispatch queue running a delivery, a test
//    advancing a `VirtualClock`.
// 2. A function named `…Locked` runs with the lock held, takes the state as
//    `inout EngineState`, and neither locks nor unlocks it. It does no system
//    call and runs no user code: what it needs woken it records (a `Bool`
//    result or `Wakes`), and its caller rings after unlocking.
// 3. Never under the lock: a handler call, a Swift concurrency job, the
//    release of a handler or of anything a handler captured (`drop`, which may
//    run any deinit), a futex call (a doorbell's ring or wait), a read of a
//    clock by a waiting thread. Each of these can call back into the engine or
//    block, and the lock is not re-entrant.
// 4. The doorbell rings when the engine thread must look again before its
//    planned wake: a timer became the earliest (`enqueueLocked` says so), a
//    job was queued while the thread sleeps, a `fire()` request, the wall
//    clock was set, or a released scheduler's last live timer ended.
//    `handlerDone` rings when a handler call ends while a `cancel()` waits.
// 5. In debug builds, `assertInvariantsLocked` checks the state after every
//    operation that changes it (see `checkInvariants`).

/// What a `…Locked` function found must be woken; the caller rings it after
/// unlocking (``TimerEngine/ring(_:)``).
struct Wakes {
    /// The engine thread's doorbell.
    var doorbell = false
    /// The doorbell of threads waiting in `cancel()` for a running handler.
    var handlerDone = false
}

/// What the engine's lock guards.
struct EngineState: @unchecked Sendable {
    // @unchecked: the queues hold unmanaged node references, which are only
    // touched under the engine's lock.

    /// One queue per sleepable clock, indexed by `PrecisionClock.Source.rawValue`.
    var queues = [TimerQueue](repeating: TimerQueue(), count: TimerEngine.sleepableSources)
    /// `fire()` requests not yet delivered: the node and when it was asked for.
    var manualFires: [(node: TimerNode, requestedAt: Int64, epoch: UInt32)] = []
    /// True while the engine thread is awake and will look at the queues again
    /// before it sleeps: no doorbell needed.
    var awake = true
    /// When the sleeping engine thread will wake, as CLOCK_MONOTONIC ns.
    var plannedWake: Int64 = .min
    var shutdownRequested = false
    /// Threads inside `cancel()` waiting for a running handler to return.
    var cancelWaiters = 0
    /// Handler calls of a timer running past its first (see
    /// ``TimerEngine/beginCallLocked(_:_:)``), by node: an entry only while
    /// there are any, and the node is alive while its calls run.
    var extraCalls: [ObjectIdentifier: Int] = [:]
    /// Timers scheduled or suspended (not fired one-shots, not cancelled).
    var live = 0
    /// Fires, lateness, run times (the atomic counters are the engine's own).
    var statistics: TimerStatistics
    var baseline = StatisticsBaseline()
    /// The histograms of timers made with `recordsLateness`, by node. An entry
    /// goes when the timer's handle is released, before the node can be freed,
    /// so an address is never reused for a stale entry.
    var latenessRecords: [ObjectIdentifier: LatencyHistogram] = [:]
    /// Times the wall clock was reported set (see ``WallClockWatcher``).
    var wallClockChanges: UInt64 = 0
    /// Swift concurrency jobs waiting for the engine thread, in FIFO order
    /// (see TimerEngine+Jobs.swift).
    var jobs: [TimerEngine.Job] = []
    /// Sleeps a spin resumed ahead of their deadline (CLOCK_MONOTONIC), counted
    /// as fires, whose lateness the thread records once the spin has reached
    /// the deadline (see ``TimerEngine/recordEarlyResumesLocked(_:spinEndedAt:)``);
    /// each with the statistics' count of resets when it fired.
    var earlyResumedFires: [(deadline: Int64, resets: UInt64)] = []
    #if DEBUG
    /// Every started node of this engine, weakly: the invariants' census, kept
    /// while the engine has started few (see `fullCheckLimit`).
    var census: [WeakNode] = []
    var censusOverflowed = false
    /// Invariant checks made, for sampling the whole-state check.
    var invariantChecks: UInt = 0
    #endif
    /// The task executor (a scheduler) the queued tasks prefer, held while any
    /// of their jobs is queued.
    var jobOwner: (any TaskExecutor)?
    /// Under virtual time, the ticks collected and not yet handed to their
    /// handlers, in the order they fire (see ``TimerEngine/fireDue()``).
    var virtualDeliveries = Deque<Tick>()
}

/// The timer engine: queues of deadlines, the coalescing wait, and delivery.
///
/// The engine reads "now" through its ``EngineClock``: ``KernelClock`` for a
/// scheduler with a thread of its own (``TimerScheduler/init(options:logger:)``, which
/// runs ``threadMain()``), or a ``VirtualClock``, which has no thread and calls
/// ``fireDue()`` as a test advances time, so semantics are tested with exact
/// deadlines and no sleeping.
final class TimerEngine: Sendable {
    static let sleepableSources = 3

    /// How far before now a repeating timer's grid may be anchored: 2^62 ns
    /// (about 146 years). The engine counts the ticks a late fire skips as
    /// `(now − deadline) / interval` in `Int64`, which a grid anchored further
    /// back would overflow.
    static let maximumLookBack: Int64 = 1 << 62

    let state: Locked<EngineState>
    /// The doorbell the engine thread sleeps on.
    let doorbell = Doorbell()
    /// Bumped after a handler returns while someone waits in `cancel()`.
    let handlerDone = Doorbell()
    let options: EngineOptions
    /// Where "now" comes from (the kernel, or a test's virtual clock).
    let clock: any EngineClock
    /// Times the engine thread returned from a wait.
    let wakeups = Atomic<UInt64>(0)
    let threadSetup = Locked(ThreadSetup())
    /// The kernel thread id of the engine thread (0 before it starts, and
    /// always 0 under virtual time): tests measure that thread's CPU time.
    let threadID = Atomic<Int32>(0)
    /// Set once this (real) engine asked the ``WallClockWatcher`` to tell it
    /// when the system time is set.
    let watchesWallClock = Atomic<Bool>(false)
    /// The task executors sleeps on this engine's thread prefer while they
    /// wait (made on first use).
    let sleepExecutorsSlot = Locked<SleepExecutors?>(nil)
    /// Sleeps registered on this engine's thread that resumed on another thread
    /// (a hop through the global pool; tests check it stays 0).
    let sleepsResumedElsewhere = Atomic<Int>(0)
    /// Jobs run so far (tests bound them per sleep: three for a task's, four
    /// for an actor's in a release build; an extra hop shows as more).
    let jobsRun = Atomic<UInt64>(0)
    /// Under virtual time, the thread running this engine's jobs now (0: none).
    let drainingThread = Atomic<Int32>(0)
    /// Under virtual time, the thread delivering this engine's ticks now, inside
    /// an advance (0: none). Its handlers are isolated to the engine as a real
    /// scheduler's are on its thread; unlike `drainingThread`, it does not keep
    /// a nested advance from running jobs.
    let deliveringThread = Atomic<Int32>(0)
    /// Set once an actor may use this engine as its executor (see
    /// `keepAliveAsActorExecutor()`).
    let servesActors = Atomic<Bool>(false)

    /// Time the engine thread spent spinning, ns.
    let spinNanoseconds = Atomic<UInt64>(0)

    init(options: EngineOptions, clock: any EngineClock) {
        self.options = options
        self.clock = clock
        // Adaptive: many threads take this lock at a high rate. A realtime
        // thread must never wait behind a preempted normal thread that holds
        // it, so a realtime scheduler's inherits priority (see `Locked`).
        state = Locked(EngineState(statistics: TimerStatistics(since: clock.nanoseconds(.monotonic))),
                       kind: options.realtimePriority == nil ? .adaptive : .priorityInheriting)
    }

    // MARK: - Time

    @inline(__always)
    func now(_ source: PrecisionClock.Source) -> Int64 {
        clock.nanoseconds(source)
    }


    // MARK: - Scheduling

    /// Queues a new node (state `.idle` with its first deadline set). A node
    /// cancelled before it started (an async sleep whose task was cancelled
    /// first) stays cancelled: starting it does nothing.
    func start(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .idle else { return false }
            s.live += 1
            #if DEBUG
            if !s.censusOverflowed {
                s.census.removeAll { $0.node == nil }
                s.census.append(WeakNode(node: node))
                s.censusOverflowed = s.census.count > Self.fullCheckLimit
            }
            #endif
            defer { assertInvariantsLocked(&s, node) }
            return enqueueLocked(&s, node)
        }
        if ring { doorbell.ring() }
        if node.source == .realtime && !clock.isVirtual
            && !watchesWallClock.exchange(true, ordering: .acquiringAndReleasing) {
            WallClockWatcher.shared.watch(self)
        }
    }

    /// The system time was set: wall-clock deadlines are compared with the new
    /// time at once. Those now past fire (a repeating timer's jumped-over ticks
    /// are missed ticks, per its policy); those now further away wait for it.
    /// The real engine thread re-plans on its doorbell; under virtual time,
    /// ``VirtualClock/setRealtime(_:)`` counts the change here and then fires
    /// what is due on the calling thread.
    func wallClockChanged() {
        state.withLock { $0.wallClockChanges &+= 1 }
        doorbell.ring()
        options.logger.debug("system time set; wall-clock timers re-planned",
                             metadata: ["scheduler": "\(options.name)"])
    }

    /// Puts a suspended node on its queue. Returns true when the engine thread
    /// must be woken because this node (or the wheel slot it is filed in) is
    /// now the earliest it must serve.
    func enqueueLocked(_ s: inout EngineState, _ node: TimerNode) -> Bool {
        node.state = .scheduled
        // A grid tick in flight on a delivery queue re-queues the node when it ends.
        guard !node.inFlight else { return false }
        let wakeBy = s.queues[node.source.rawValue].insert(node)
        // `awake` is never cleared without a thread (virtual time): no doorbell.
        guard !s.awake, let wakeBy else { return false }
        let latestMono: Int64
        if node.source == .monotonic {
            latestMono = wakeBy
        } else {
            latestMono = wakeBy.saturatingSubtract(now(node.source)).saturatingAdd(now(.monotonic))
        }
        return latestMono < s.plannedWake
    }

    /// Cancels `node`: no handler call of it starts after this returns. With
    /// `waitForHandler`, also returns only once no handler call of this timer is
    /// running, unless waiting could deadlock: on a scheduler's own thread and
    /// inside any timer's handler (see ``mayWaitForHandlers``) it returns at once.
    func cancel(_ node: TimerNode, waitForHandler: Bool, dropsLatenessRecord: Bool = false) {
        var wakes = Wakes()
        let (released, record, running) = state.withLock { s -> (TimerNode.Handler?, LatencyHistogram?, Bool) in
            defer { assertInvariantsLocked(&s, node) }
            // The handle is gone: its record goes, and the timer stops
            // keeping one, so a call still running cannot record it again
            // under an address that is about to be freed (and reused).
            var record: LatencyHistogram?
            if dropsLatenessRecord && node.recordsLateness {
                record = s.latenessRecords.removeValue(forKey: ObjectIdentifier(node))
                node.recordsLateness = false
            }
            return (cancelLocked(&s, node, &wakes), record, node.isRunning)
        }
        withExtendedLifetime(record) {}  // its buckets are freed here, outside the lock
        ring(wakes)
        if let released { drop(released) }
        // A call that had not begun when the lock was released never will.
        guard running, waitForHandler, Self.mayWaitForHandlers else { return }
        while true {
            let seq = state.withLock { s -> UInt32? in
                guard node.isRunning else { return nil }
                s.cancelWaiters += 1
                return handlerDone.value
            }
            guard let seq else { return }
            handlerDone.wait(expecting: seq, clock: cmc_clock_monotonic, deadline: .max)
            state.withLock { $0.cancelWaiters -= 1 }
        }
    }

    /// Whether the calling thread may block until another thread's handler call
    /// returns. Not on a scheduler's thread (it is the thread that would have to
    /// finish the call, or one that other waiters wait for) and not inside any
    /// timer's handler (two handlers cancelling each other would each wait for
    /// the other). The thread-local marker is set around every handler call and,
    /// for its whole life, on every scheduler thread.
    static var mayWaitForHandlers: Bool { cmc_current_no_wait_marker() == nil }

    /// Marks `node` cancelled and takes it off its queue. Returns its handler,
    /// which the caller releases after unlocking (releasing it may run arbitrary
    /// deinits, which must not run under the engine's lock); the last live
    /// timer of a released scheduler records a ring of its doorbell in `wakes`.
    func cancelLocked(_ s: inout EngineState, _ node: TimerNode, _ wakes: inout Wakes) -> TimerNode.Handler? {
        switch node.state {
        case .cancelled:
            return nil
        case .idle:
            break
        case .scheduled:
            if !node.inFlight { s.queues[node.source.rawValue].remove(node) }
            s.live -= 1
        case .suspended, .collected:
            node.suspendedBeforeFire = false
            s.live -= 1
        case .done:
            // A fired one-shot stays fired: cancel (or the release of its
            // handle) lets go of the handler it kept for a reschedule, so it can
            // never fire again (cancel still waits for a running call).
            let handler = node.handler
            node.handler = nil
            return handler
        }
        node.state = .cancelled
        node.isPrepared = false
        let handler = node.handler
        node.handler = nil
        if s.shutdownRequested && s.live == 0 { wakes.doorbell = true }
        return handler
    }

    /// Rings what a `…Locked` function recorded in `wakes`; after unlocking.
    func ring(_ wakes: Wakes) {
        if wakes.doorbell { doorbell.ring() }
        if wakes.handlerDone { handlerDone.ring() }
    }

    @inline(never)
    func drop(_ handler: TimerNode.Handler) {
        _ = handler
    }

    /// Takes `node` off the schedule. Synchronous: once this returns, no handler
    /// call of it starts until ``resume(_:)`` (a call already running finishes).
    /// Ticks already collected, in this wake-up's batch or waiting on a delivery
    /// queue, are dropped when their turn comes (the epoch no longer matches) and
    /// counted as missed on the next tick delivered. A one-shot collected but not
    /// yet called goes back to suspended with its deadline. A tick prepared
    /// ahead of a spin whose deadline has not come is taken back first: it
    /// has not fired, so it is the tick the resume brings, not a missed one.
    func suspend(_ node: TimerNode) {
        state.withLock { s in
            defer { assertInvariantsLocked(&s, node) }
            _ = withdrawPreparedLocked(&s, node)
            node.isPrepared = false  // a prepared tick now due is dropped as any collected one
            switch node.state {
            case .scheduled:
                if !node.inFlight { s.queues[node.source.rawValue].remove(node) }
            case .collected:
                node.suspendedBeforeFire = false  // collected, not called: it waits for its resume instead
            case .suspended:
                node.epoch &+= 1  // a `fire()` asked for since the last suspend is dropped
                return
            case .idle, .done, .cancelled:
                return
            }
            node.state = .suspended
            node.epoch &+= 1
        }
    }

    func resume(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            defer { assertInvariantsLocked(&s, node) }
            if node.state == .collected && node.suspendedBeforeFire {
                // Resumed while its fire() is on its way: no longer suspended,
                // and done once that call begins.
                node.suspendedBeforeFire = false
                return false
            }
            guard node.state == .suspended else { return false }
            node.grid.resume(at: now(node.source), policy: node.policy)
            return enqueueLocked(&s, node)
        }
        if ring { doorbell.ring() }
    }

    /// Requests one handler call now: for a repeating timer without moving the
    /// grid; a one-shot fires now instead of at its deadline (one prepared
    /// ahead of a spin to a deadline not yet come is taken back for it).
    func fireNow(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            if !node.isRepeating { _ = withdrawPreparedLocked(&s, node) }
            guard node.state == .scheduled || node.state == .suspended else { return false }
            s.manualFires.append((node, now(node.source), node.epoch))
            return !s.awake
        }
        if ring { doorbell.ring() }
    }

    /// Changes a live timer's schedule under the lock: `body` edits the node
    /// while it is off its queue, then it is queued again. A tick prepared
    /// ahead of a spin whose deadline has not come is taken back first, so
    /// the change acts on that tick, as it would have a moment earlier.
    func reschedule(_ node: TimerNode, _ body: (TimerNode) -> Void) {
        let ring = state.withLock { s -> Bool in
            defer { assertInvariantsLocked(&s, node) }
            let withdrew = withdrawPreparedLocked(&s, node)
            return rescheduleLocked(&s, node, body) || withdrew
        }
        if ring { doorbell.ring() }
    }

    private func rescheduleLocked(_ s: inout EngineState, _ node: TimerNode, _ body: (TimerNode) -> Void) -> Bool {
        switch node.state {
        case .scheduled where !node.inFlight:
            let source = node.source.rawValue
            if s.queues[source].waitsInWheel(node) {
                // A timeout pushed back stays where it is filed (O(1)).
                let before = node.deadline
                body(node)
                if node.deadline >= before {
                    s.queues[source].movedLaterInPlace(node)
                    return false
                }
                s.queues[source].remove(node)
                return enqueueLocked(&s, node)
            }
            s.queues[source].remove(node)
            body(node)
            return enqueueLocked(&s, node)
        case .scheduled, .suspended:
            body(node)  // off the queue: queued again when it resumes or lands
            return false
        case .idle, .collected, .done, .cancelled:
            return false
        }
    }

    /// Arms a one-shot again for `deadline`, in place (Dispatch's
    /// `schedule(deadline:)` on a source): a pending one moves, a suspended one
    /// keeps waiting for its resume with the new deadline, one collected for a
    /// fire that has not begun, or asked to ``fireNow(_:)`` and not yet
    /// collected, drops that fire (its tick or request is stale) and waits for
    /// the new deadline, and a fired one that still has its handler is live
    /// again (unless `revivesFired` is false, or the scheduler has been
    /// released). A cancelled or released timer stays as it is. Returns
    /// whether the timer is now armed for `deadline`.
    @discardableResult
    func rearm(_ node: TimerNode, at deadline: Int64, revivesFired: Bool = true) -> Bool {
        let (armed, ring) = state.withLock { s -> (Bool, Bool) in
            defer { assertInvariantsLocked(&s, node) }
            // A prepared fire is stale either way (its deadline moves).
            node.isPrepared = false
            // So is a `fire()` asked for and not yet collected: like a fire
            // collected and not begun, it is dropped (see `collectLocked`).
            if !s.manualFires.isEmpty && (node.state == .scheduled || node.state == .suspended) {
                node.epoch &+= 1
            }
            switch node.state {
            case .scheduled:
                let source = node.source.rawValue
                if s.queues[source].waitsInWheel(node) && deadline >= node.deadline {
                    // A timeout pushed back stays where it is filed (O(1)).
                    node.grid = Grid(firstDeadline: deadline, period: .zero)
                    s.queues[source].movedLaterInPlace(node)
                    return (true, false)
                }
                s.queues[source].remove(node)
            case .suspended:
                break  // queued with the new deadline when it resumes
            case .collected:
                node.epoch &+= 1  // the collected tick is dropped when its turn comes
                if node.suspendedBeforeFire {
                    // Its fire() was asked for while suspended: suspended again.
                    node.suspendedBeforeFire = false
                    node.state = .suspended
                }
            case .done where node.handler != nil && revivesFired && !s.shutdownRequested:
                // Not once the scheduler is released: its thread ends when no
                // timer is live, and may have ended already.
                s.live += 1
            case .idle, .done, .cancelled:
                return (false, false)
            }
            node.grid = Grid(firstDeadline: deadline, period: .zero)
            return (true, node.state != .suspended && enqueueLocked(&s, node))
        }
        if ring { doorbell.ring() }
        return armed
    }

    /// Moves the first deadline of a node made and not started yet (`.idle`):
    /// a one-shot's deadline, or a repeating timer's first tick (its grid goes
    /// on from there with its interval); it is queued there when it starts.
    /// Returns false, changing nothing, once the node has started or was
    /// cancelled.
    func moveUnstarted(_ node: TimerNode, to deadline: Int64) -> Bool {
        state.withLock { s in
            guard node.state == .idle else { return false }
            if node.isRepeating {
                node.grid.moveNextTick(to: deadline)
            } else {
                node.grid = Grid(firstDeadline: deadline, period: .zero)
            }
            return true
        }
    }

    func read<T: Sendable>(_ node: TimerNode, _ body: (TimerNode) -> T) -> T {
        state.withLock { _ in body(node) }
    }

    /// The deadline of `node`'s pending tick: a tick prepared ahead of a spin
    /// is pending until its deadline comes. Nil once cancelled.
    func pendingDeadline(_ node: TimerNode) -> Int64? {
        state.withLock { s in
            node.state == .cancelled ? nil : (scheduleBeforePreparedFireLocked(s, node)?.nextDeadline ?? node.deadline)
        }
    }

    // MARK: - A fire prepared ahead of a spin

    /// The schedule `node` had before the engine thread prepared its pending
    /// fire ahead of a spin (see ``TimerNode/isPrepared``), while that fire's
    /// deadline has not come on the timer's clock; nil otherwise. Until then
    /// the fire has not happened: the tick is still the timer's pending one.
    func scheduleBeforePreparedFireLocked(_ s: borrowing EngineState, _ node: TimerNode) -> Grid? {
        guard node.isPrepared else { return nil }
        let before = node.isRepeating ? node.gridBeforePrepared : node.grid
        return now(node.source) < before.nextDeadline ? before : nil
    }

    /// Takes back a fire prepared ahead of a spin whose deadline has not
    /// come: the timer is queued again as it was before (a repeating timer
    /// with its grid back on the prepared tick), and the prepared tick does
    /// nothing when its turn comes (a repeating one's is withdrawn, see
    /// ``isWithdrawn(_:)``; a one-shot's is of an older epoch). Returns
    /// whether it took one back: the caller rings the doorbell, so that the
    /// spin collects the timer again if it is still due by its end.
    func withdrawPreparedLocked(_ s: inout EngineState, _ node: TimerNode) -> Bool {
        guard let before = scheduleBeforePreparedFireLocked(s, node) else { return false }
        node.isPrepared = false
        if node.isRepeating {
            node.grid = before
            node.withdrawals &+= 1
            node.inFlight = false
        } else {
            node.epoch &+= 1
        }
        _ = enqueueLocked(&s, node)
        return true
    }

    /// Calls `body` with the lateness histogram `node` keeps, under the lock;
    /// nil when it keeps none.
    func withLatenessRecord<T: Sendable>(of node: TimerNode, _ body: (inout LatencyHistogram) -> T) -> T? {
        state.withLock { s in
            guard node.recordsLateness else { return nil }
            return body(&s.latenessRecords[ObjectIdentifier(node), default: LatencyHistogram()])
        }
    }

    /// Moves tick `k` of a repeating `node` (nil: its pending tick) to
    /// `deadline`; the grid continues from there, and the pending tick moves
    /// with tick `k` when it is `k` or later. Nothing on a one-shot.
    func moveTick(_ node: TimerNode, _ k: Int64?, to deadline: Int64) {
        reschedule(node) { n in
            guard n.isRepeating else { return }
            if let k {
                n.grid.moveTick(k, to: deadline)
            } else {
                n.grid.moveNextTick(to: deadline)
            }
        }
    }

    /// A new period for a repeating `node`, from its pending tick or from the
    /// fired `tick`; nothing on a one-shot.
    func setPeriod(_ node: TimerNode, _ period: Period, from tick: (index: Int64, deadline: Int64)? = nil) {
        reschedule(node) { n in
            guard n.isRepeating else { return }
            n.setPeriod(period, from: tick)
        }
    }

    /// The statistics now: a copy taken under the lock (its histograms are
    /// shared until the engine next records into them), and the counters.
    func statistics() -> TimerStatistics {
        let (copy, live, changes, base) = state.withLock { ($0.statistics, $0.live, $0.wallClockChanges, $0.baseline) }
        var stats = copy
        stats.liveTimers = live
        stats.wallClockChanges = Int(truncatingIfNeeded: changes)
        stats.wakeups = Int(truncatingIfNeeded: wakeups.load(ordering: .relaxed) &- base.wakeups)
        stats.jobs = Int(truncatingIfNeeded: jobsRun.load(ordering: .relaxed) &- base.jobs)
        stats.spinTime = .nanoseconds(Int64(truncatingIfNeeded: spinNanoseconds.load(ordering: .relaxed)
                                                &- base.spinNanoseconds))
        return stats
    }

    /// Starts the statistics again from now (the gauges are kept).
    func resetStatistics() {
        let now = clock.nanoseconds(.monotonic)
        let base = StatisticsBaseline(wakeups: wakeups.load(ordering: .relaxed), jobs: jobsRun.load(ordering: .relaxed),
                                      spinNanoseconds: spinNanoseconds.load(ordering: .relaxed))
        // A fresh value, so that the reset allocates nothing under the lock
        // and a copy taken before keeps its figures.
        var fresh = TimerStatistics(since: now)
        let old = state.withLock { s -> TimerStatistics in
            s.baseline = base
            fresh.resets = s.statistics.resets &+ 1
            return Swift.exchange(&s.statistics, with: fresh)
        }
        withExtendedLifetime(old) {}  // its buckets are freed here, outside the lock
    }
}
