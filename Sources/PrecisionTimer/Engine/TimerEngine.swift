import CMonoClock
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    /// Timers scheduled or suspended (not fired one-shots, not cancelled).
    var live = 0
    /// Handler calls made so far.
    var fires: UInt64 = 0
    /// Times the wall clock was reported set (see ``WallClockWatcher``).
    var wallClockChanges: UInt64 = 0
}

/// The timer engine: queues of deadlines, the coalescing wait, and delivery.
///
/// The engine reads "now" and waits through its driver: the real one is a
/// dedicated thread on PrecisionClock (``TimerScheduler/init(options:)``); the
/// virtual one (``VirtualClock``) has no thread and fires timers when the test
/// advances time, so semantics are tested with exact deadlines and no sleeping.
final class TimerEngine: Sendable {
    static let sleepableSources = 3

    let state = Locked(EngineState())
    /// The doorbell the engine thread sleeps on.
    let doorbell = WakeWord()
    /// Bumped after a handler returns while someone waits in `cancel()`.
    let handlerDone = WakeWord()
    let options: TimerScheduler.Options
    let virtualClock: VirtualClock?
    /// Times the engine thread returned from a wait.
    let wakeups = Atomic<UInt64>(0)
    let threadReport = Locked(TimerScheduler.ThreadReport())
    /// The kernel thread id of the engine thread (0 before it starts, and
    /// always 0 under virtual time): tests measure that thread's CPU time.
    let threadID = Atomic<Int32>(0)
    /// Set once this (real) engine asked the ``WallClockWatcher`` to tell it
    /// when the system time is set.
    let watchesWallClock = Atomic<Bool>(false)

    init(options: TimerScheduler.Options, virtualClock: VirtualClock?) {
        self.options = options
        self.virtualClock = virtualClock
    }

    // MARK: - Time

    @inline(__always)
    func now(_ source: PrecisionClock.Source) -> Int64 {
        if let virtualClock {
            return virtualClock.nanoseconds(source)
        }
        return cmc_now_ns(source.clockID)
    }

    // MARK: - Scheduling

    /// Queues a new node (state `.idle` with its first deadline set). A node
    /// cancelled before it started (an async sleep whose task was cancelled
    /// first) stays cancelled: starting it does nothing.
    func start(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .idle else { return false }
            s.live += 1
            return enqueueLocked(&s, node)
        }
        if ring { doorbell.bumpAndWake() }
        if node.source == .realtime && virtualClock == nil
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
        if virtualClock == nil {
            doorbell.bumpAndWake()
        }
    }

    /// Puts a suspended node on its queue. Returns true when the engine thread
    /// must be woken because this node is now the earliest it must serve.
    private func enqueueLocked(_ s: inout EngineState, _ node: TimerNode) -> Bool {
        node.state = .scheduled
        // A grid tick in flight on a delivery queue re-queues the node when it ends.
        guard !node.inFlight else { return false }
        s.queues[node.source.rawValue].insert(node)
        guard virtualClock == nil, !s.awake, node.latestSlot == 0 else { return false }
        let latestMono: Int64
        if node.source == .monotonic {
            latestMono = node.latest
        } else {
            latestMono = node.latest.saturatingSubtract(now(node.source)).saturatingAdd(now(.monotonic))
        }
        return latestMono < s.plannedWake
    }

    /// Cancels `node`: no handler call of it starts after this returns. With
    /// `waitForHandler`, also returns only once no handler call of this timer is
    /// running, unless waiting could deadlock: on a scheduler's own thread and
    /// inside any timer's handler (see ``mayWaitForHandlers``) it returns at once.
    func cancel(_ node: TimerNode, waitForHandler: Bool) {
        let released = state.withLock { s -> TimerNode.Handler? in
            cancelLocked(&s, node)
        }
        if let released { drop(released) }
        guard waitForHandler, Self.mayWaitForHandlers else { return }
        while true {
            let seq = state.withLock { s -> UInt32? in
                guard node.runningCount > 0 else { return nil }
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
    static var mayWaitForHandlers: Bool { cmc_current_marker() == nil }

    /// Marks `node` cancelled and takes it off its queue. Returns its handler,
    /// which the caller releases after unlocking (releasing it may run arbitrary
    /// deinits, which must not run under the engine's lock).
    private func cancelLocked(_ s: inout EngineState, _ node: TimerNode) -> TimerNode.Handler? {
        switch node.state {
        case .cancelled:
            return nil
        case .idle:
            break
        case .scheduled:
            if !node.inFlight { s.queues[node.source.rawValue].remove(node) }
            s.live -= 1
        case .suspended:
            s.live -= 1
        case .done:
            // A fired one-shot whose handler call has begun stays fired: cancel
            // has nothing left to stop (it still waits for a running call). One
            // collected but not yet delivered (a queue delivery) is stopped.
            guard node.handler != nil else { return nil }
        }
        node.state = .cancelled
        let handler = node.handler
        node.handler = nil
        if s.shutdownRequested && s.live == 0 {
            doorbell.bumpAndWake()
        }
        return handler
    }

    @inline(never)
    private func drop(_ handler: TimerNode.Handler) {
        _ = handler
    }

    /// Takes `node` off the schedule. Synchronous: once this returns, no handler
    /// call of it starts until ``resume(_:)`` (a call already running finishes).
    /// Ticks already collected, in this wake-up's batch or waiting on a delivery
    /// queue, are dropped when their turn comes (the epoch no longer matches) and
    /// counted as missed on the next tick delivered. A one-shot collected but not
    /// yet called goes back to suspended with its deadline.
    func suspend(_ node: TimerNode) {
        state.withLock { s in
            switch node.state {
            case .scheduled:
                if !node.inFlight { s.queues[node.source.rawValue].remove(node) }
            case .done where node.handler != nil:
                s.live += 1  // collected, not called: it has not fired after all
            case .idle, .suspended, .done, .cancelled:
                return
            }
            node.state = .suspended
            node.epoch &+= 1
        }
    }

    func resume(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .suspended else { return false }
            node.grid.resume(at: now(node.source))
            return enqueueLocked(&s, node)
        }
        if ring { doorbell.bumpAndWake() }
    }

    /// Requests one handler call now: for a repeating timer without moving the
    /// grid; a one-shot fires now instead of at its deadline.
    func fireNow(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .scheduled || node.state == .suspended else { return false }
            s.manualFires.append((node, now(node.source), node.epoch))
            return !s.awake && virtualClock == nil
        }
        if ring { doorbell.bumpAndWake() }
    }

    /// Changes a live timer's schedule under the lock: `body` edits the node
    /// while it is off its queue, then it is queued again.
    func reschedule(_ node: TimerNode, _ body: (TimerNode) -> Void) {
        let ring = state.withLock { s -> Bool in
            switch node.state {
            case .scheduled where !node.inFlight:
                s.queues[node.source.rawValue].remove(node)
                body(node)
                return enqueueLocked(&s, node)
            case .scheduled, .suspended:
                body(node)  // off the queue: queued again when it resumes or lands
                return false
            case .idle, .done, .cancelled:
                return false
            }
        }
        if ring { doorbell.bumpAndWake() }
    }

    func read<T: Sendable>(_ node: TimerNode, _ body: (TimerNode) -> T) -> T {
        state.withLock { _ in body(node) }
    }

    // MARK: - Firing

    /// Pops every node due at its clock's current time, advances repeating ones
    /// on their grid (re-queued at once, so the grid never waits for the
    /// handler), and appends one tick per fire to `batch`.
    ///
    /// With `preparing`, that clock's timers due by the given instant are taken
    /// as if it were already that instant: the engine prepares the fire before a
    /// deadline it is about to spin to, so that at the deadline only the handler
    /// call is left (its ticks are delivered after the spin, never early).
    private func collectLocked(_ s: inout EngineState, _ due: inout [Unmanaged<TimerNode>], _ batch: inout [Tick],
                               preparing: (source: PrecisionClock.Source, instant: Int64)? = nil) {
        if !s.manualFires.isEmpty {
            for (node, requestedAt, epoch) in s.manualFires
            where (node.state == .scheduled || node.state == .suspended) && node.epoch == epoch {
                if !node.isRepeating {
                    // A one-shot fired by hand has fired: it leaves the schedule
                    // (as `Timer.fire()` invalidates a non-repeating timer), so
                    // its one handler call is this one.
                    if node.state == .scheduled { s.queues[node.source.rawValue].remove(node) }
                    node.state = .done
                    s.live -= 1
                }
                batch.append(Tick(index: node.grid.nextIndex, deadline: .init(nanoseconds: requestedAt),
                                  firedAt: .init(nanoseconds: requestedAt), missed: 0, isManual: true, node: node,
                                  interval: node.interval, epoch: epoch))
            }
            s.manualFires.removeAll(keepingCapacity: true)
        }
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            let src = PrecisionClock.Source(rawValue: source)!
            // A deadline saturated at Int64.max means "never": it is not due
            // even when (virtual) time reaches the end of the range.
            let now = Swift.min(preparing?.source == src ? preparing!.instant : self.now(src), .max - 1)
            s.queues[source].removeDue(at: now, into: &due)
            for ref in due {
                batch.append(advanceLocked(&s, ref.takeRetainedValue(), now: now, parks: preparing != nil))
            }
            due.removeAll(keepingCapacity: true)
        }
    }

    /// The tick `node` fires now, and its next deadline per its policy. A
    /// repeating node goes back on its queue at once, unless its tick is
    /// delivered on a queue or prepared ahead of a spin (`parks`): then it stays
    /// off the queue until that tick has been delivered or dropped, so its next
    /// tick can never overtake this one.
    private func advanceLocked(_ s: inout EngineState, _ node: TimerNode, now: Int64, parks: Bool) -> Tick {
        guard node.isRepeating else {
            node.state = .done
            s.live -= 1
            return Tick(index: 0, deadline: .init(nanoseconds: node.deadline), firedAt: .init(nanoseconds: now),
                        missed: 0, isManual: false, node: node, epoch: node.epoch)
        }
        let fired = node.grid.fire(at: now)
        let tick = Tick(index: fired.index, deadline: .init(nanoseconds: fired.deadline),
                        firedAt: .init(nanoseconds: now), missed: fired.missed, isManual: false, node: node,
                        interval: node.interval, epoch: node.epoch)
        if case .queue = node.delivery {
            node.state = .scheduled
            node.inFlight = true  // queued again once this delivery has run
        } else if parks {
            node.state = .scheduled
            node.inFlight = true
        } else {
            _ = enqueueLocked(&s, node)
        }
        return tick
    }

    /// Delivers `tick` where its timer asked.
    @inline(__always)
    func deliver(_ tick: Tick) {
        switch tick.node.delivery {
        case .inline:
            run(tick)
        case .queue(let queue):
            queue.async { tick.node.engine.run(tick) }
        }
    }

    /// A handler call that may start: the handler and the tick it receives.
    struct Call {
        let handler: TimerNode.Handler
        let tick: Tick
    }

    /// Calls the handler for `tick` unless the timer was cancelled or suspended
    /// since the tick was collected. The handler (and what it captured) is
    /// released only after the end of the call is recorded, so a deinit it runs
    /// never finds the call still counted as running.
    func run(_ tick: Tick) {
        guard let begun = state.withLock({ s in beginLocked(&s, tick) }) else {
            if state.withLock({ s in landLocked(&s, tick) }) { doorbell.bumpAndWake() }
            return
        }
        let keep = invoke(begun)
        let (released, ring) = state.withLock { s in endLocked(&s, tick, keep: keep) }
        if ring { doorbell.bumpAndWake() }
        if let released { drop(released) }
        withExtendedLifetime(begun) {}
    }

    /// Delivers a batch the engine collected. Inline ticks run one after another
    /// on this thread with one lock round-trip per fire (the end of one call and
    /// the start of the next share it): with 100,000 timers due at once, the lock
    /// is a large part of the cost.
    func deliver(_ batch: [Tick]) {
        var finishing: (call: Call, keep: Bool)?
        for tick in batch {
            guard case .inline = tick.node.delivery else {
                deliver(tick)
                continue
            }
            let (begun, released, ring) = state.withLock { s -> (Call?, TimerNode.Handler?, Bool) in
                var ring = false
                var released: TimerNode.Handler?
                if let f = finishing {
                    (released, ring) = endLocked(&s, f.call.tick, keep: f.keep)
                }
                let begun = beginLocked(&s, tick)
                if begun == nil && landLocked(&s, tick) { ring = true }
                return (begun, released, ring)
            }
            finishing = nil  // the previous handler goes now that its end is recorded
            if ring { doorbell.bumpAndWake() }
            if let released { drop(released) }
            guard let begun else { continue }
            finishing = (begun, invoke(begun))
        }
        if let last = finishing {
            let (released, ring) = state.withLock { s in endLocked(&s, last.call.tick, keep: last.keep) }
            finishing = nil
            if ring { doorbell.bumpAndWake() }
            if let released { drop(released) }
        }
    }

    /// Marks a handler call of `tick`'s timer as running and returns it, or nil
    /// when the tick is not to be delivered: the timer was cancelled, or
    /// suspended since the tick was collected (a dropped grid tick is carried as
    /// missed to the next tick delivered).
    private func beginLocked(_ s: inout EngineState, _ tick: Tick) -> Call? {
        let node = tick.node
        guard node.state != .cancelled, let handler = node.handler else { return nil }
        guard tick.epoch == node.epoch else {
            if !tick.isManual && node.isRepeating {
                node.carriedMissed = node.carriedMissed.saturatingAdd(tick.missed.saturatingAdd(1))
            }
            return nil
        }
        node.runningCount += 1
        if node.state == .done {
            node.handler = nil  // a fired one-shot lets go of its captures after this call
        }
        var missed = tick.missed
        if !tick.isManual && node.carriedMissed != 0 {
            missed = missed.saturatingAdd(node.carriedMissed)
            node.carriedMissed = 0
        }
        return Call(handler: handler, tick: Tick(index: tick.index, deadline: tick.deadline, firedAt: tick.firedAt,
                                                 missed: missed, isManual: tick.isManual, node: node,
                                                 interval: tick.interval, epoch: tick.epoch))
    }

    /// A queue-delivered grid tick has run or been dropped: its timer goes back
    /// on its queue (unless suspended or cancelled meanwhile). Returns whether
    /// the engine thread must be woken.
    private func landLocked(_ s: inout EngineState, _ tick: Tick) -> Bool {
        let node = tick.node
        guard !tick.isManual, node.inFlight else { return false }
        node.inFlight = false
        guard node.state == .scheduled else { return false }
        return enqueueLocked(&s, node)
    }

    /// Ends a handler call: wakes threads waiting in `cancel()`, lands a queued
    /// tick, and cancels the timer if the handler asked (a weak owner is gone).
    /// Returns a handler to release after unlocking, and whether to ring.
    private func endLocked(_ s: inout EngineState, _ tick: Tick, keep: Bool)
        -> (released: TimerNode.Handler?, ring: Bool) {
        let node = tick.node
        node.runningCount -= 1
        s.fires &+= 1
        if s.cancelWaiters > 0 {
            handlerDone.bumpAndWake()
        }
        let ring = landLocked(&s, tick)
        return (keep ? nil : cancelLocked(&s, node), ring)
    }

    /// Calls the handler with its tick stamped with the time of the call,
    /// marking this thread as inside the timer's handler meanwhile.
    @inline(__always)
    private func invoke(_ call: Call) -> Bool {
        let tick = call.tick
        let node = tick.node
        let fired = Tick(index: tick.index, deadline: tick.deadline, firedAt: .init(nanoseconds: now(node.source)),
                         missed: tick.missed, isManual: tick.isManual, node: node, interval: tick.interval,
                         epoch: tick.epoch)
        let previous = cmc_swap_marker(Unmanaged.passUnretained(node).toOpaque())
        let keep = call.handler(fired)
        cmc_swap_marker(previous)
        return keep
    }

    // MARK: - The engine thread

    /// How the engine thread waits next.
    struct WaitPlan {
        var clock: clockid_t = cmc_clock_monotonic
        var source: PrecisionClock.Source = .monotonic
        /// Sleep (on the doorbell) until this instant of `clock`.
        var sleepUntil: Int64 = .max
        /// Then spin until this instant (`.min`: no spin).
        var spinUntil: Int64 = .min
        /// The thread's timer slack for the sleep.
        var slack: UInt64 = 1
        /// The sleep has no slack, so its oversleep teaches the margin.
        var precise = false
        var doorbellValue: UInt32 = 0
    }

    /// The most urgent pending timer: the earliest latest-acceptable instant
    /// (deadline + leeway) among every clock's queue, as time remaining from
    /// each clock's reading. Timers whose deadline is "never" (saturated at
    /// `Int64.max`) are not pending for this purpose.
    struct Earliest {
        /// ns from now until the earliest latest-acceptable instant.
        var remainingLatest: Int64
        /// That timer's leeway and clock.
        var leeway: Int64
        var source: PrecisionClock.Source
        /// ns from now until the earliest deadline (any clock).
        var remainingDeadline: Int64
        var boottimePending: Bool
        var realtimePending: Bool
    }

    /// The one computation of "when must the engine be awake next", for the real
    /// thread's plan, its spin and virtual time alike. `now` reads a clock.
    func earliestLocked(_ s: borrowing EngineState, now: (PrecisionClock.Source) -> Int64) -> Earliest? {
        var best: Earliest?
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            let l = s.queues[source].byLatest.top!
            guard l.latest != .max else { continue }
            let src = PrecisionClock.Source(rawValue: source)!
            let n = now(src)
            let remainingLatest = l.latest.saturatingSubtract(n)
            let remainingDeadline = s.queues[source].byDeadline.top!.deadline.saturatingSubtract(n)
            var e = best ?? Earliest(remainingLatest: .max, leeway: 0, source: src, remainingDeadline: .max,
                                     boottimePending: false, realtimePending: false)
            if remainingLatest < e.remainingLatest {
                e.remainingLatest = remainingLatest
                e.leeway = l.leeway
                e.source = src
            }
            e.remainingDeadline = Swift.min(e.remainingDeadline, remainingDeadline)
            e.boottimePending = e.boottimePending || src == .boottime
            e.realtimePending = e.realtimePending || src == .realtime
            best = e
        }
        return best
    }

    /// Works out the next wait from the queues. With leeway to spare, the engine
    /// sleeps from the earliest deadline with a timer slack of what it can afford,
    /// so the kernel may wake it anywhere up to the earliest latest-acceptable
    /// instant and everything due then fires in one wake-up. When the most urgent
    /// timer has no leeway to spare, it sleeps to `margin` before that deadline
    /// and spins the rest (or only sleeps, with slack 1 ns, if spinning is off).
    private func planLocked(_ s: inout EngineState, estimator: inout OversleepEstimator) -> WaitPlan {
        var plan = WaitPlan()
        let nowMono = now(.monotonic)
        guard let best = earliestLocked(s, now: { $0 == .monotonic ? nowMono : self.now($0) }) else {
            s.plannedWake = .max
            return plan
        }
        // Wait on the wall clock when a wall-clock timer is the most urgent, so
        // the kernel honours a change of the system time; otherwise on CLOCK_MONOTONIC.
        if best.source == .realtime {
            plan.clock = cmc_clock_realtime
            plan.source = .realtime
        }
        let base = plan.source == .realtime ? now(.realtime) : nowMono
        let wakeBy = base.saturatingAdd(best.remainingLatest)
        // Spinning is for timers whose leeway the spin margin can still serve;
        // the rest sleep from the earliest deadline with the slack they afford,
        // keeping back the machine's typical oversleep (the learned margin).
        let spinMargin = Swift.max(estimator.margin(forWaitOf: best.remainingLatest), options.minimumSpinMargin)
        if best.leeway < spinMargin && options.allowsSpinning {
            let deadline = wakeBy.saturatingSubtract(best.leeway)
            plan.sleepUntil = deadline.saturatingSubtract(spinMargin)
            plan.spinUntil = deadline
        } else {
            // Slack: the kernel may wake the thread anywhere from the earliest
            // deadline to that plus the slack. Keep back the learned oversleep and
            // half of what remains, so a machine hiccup rarely pushes a fire past
            // its window; the other half still batches every timer due by then.
            plan.sleepUntil = base.saturatingAdd(best.remainingDeadline)
            let affordable = wakeBy.saturatingSubtract(estimator.margin).saturatingSubtract(plan.sleepUntil)
            plan.slack = UInt64(Swift.max(1, affordable / 2))
        }
        plan.precise = plan.slack == 1
        if best.boottimePending || (best.realtimePending && !WallClockWatcher.shared.isActive) {
            // Waits map CLOCK_BOOTTIME onto the clock slept on, which stops during
            // suspend: look again at least once a second so a resume is noticed.
            // The same for wall-clock timers when nothing reports a change of
            // the system time (the watcher could not start).
            let cap = base.saturatingAdd(1_000_000_000)
            if cap < plan.sleepUntil {
                plan.sleepUntil = cap
                plan.spinUntil = .min
                plan.precise = false
            }
        }
        s.plannedWake = nowMono.saturatingAdd(best.remainingLatest)
        return plan
    }

    /// The engine thread's body: collect, deliver, plan, wait; until shut down
    /// with no live timers.
    ///
    /// A wait that ends early (the doorbell, a signal, a spurious wake-up) only
    /// leads to a new plan: the thread spins only after a sleep that reached its
    /// end, and never longer than the spin margin it planned.
    func threadMain() {
        // Marks this thread as a scheduler thread for its whole life: nothing
        // that runs on it may wait for a handler call (see `mayWaitForHandlers`).
        cmc_swap_marker(Unmanaged.passUnretained(self).toOpaque())
        var estimator = OversleepEstimator()
        var slack: UInt64 = 0
        _ = cmc_timer_slack_get(&slack)
        var due: [Unmanaged<TimerNode>] = []
        var batch: [Tick] = []
        due.reserveCapacity(64)
        batch.reserveCapacity(64)
        while true {
            // The margin's recompute (when due) here, outside the lock and after
            // the last delivery, not between a wake and its fire.
            estimator.refresh()
            var plan = WaitPlan()
            let exit = state.withLock { s -> Bool in
                s.awake = true
                collectLocked(&s, &due, &batch)
                guard batch.isEmpty else { return false }
                // Checked after collecting: a collection can end the last live
                // timer (a stale `fire()` request of a cancelled one is dropped).
                if s.shutdownRequested && s.live == 0 && s.manualFires.isEmpty {
                    return true
                }
                plan = planLocked(&s, estimator: &estimator)
                plan.doorbellValue = doorbell.value
                s.awake = false
                return false
            }
            if exit { return }
            if !batch.isEmpty {
                deliver(batch)
                batch.removeAll(keepingCapacity: true)
                continue
            }
            if plan.slack != slack && cmc_timer_slack_set(plan.slack) == 0 {
                slack = plan.slack
            }
            if plan.sleepUntil == .max || cmc_now_ns(plan.clock) < plan.sleepUntil {
                var rc: Int32
                repeat {
                    // A signal (EINTR) with the doorbell unchanged leaves the plan
                    // valid (whatever changes the schedule rings the doorbell): wait
                    // again for the same absolute deadline, as swift-system's
                    // `retryOnInterrupt` does.
                    rc = doorbell.wait(expecting: plan.doorbellValue, clock: plan.clock, deadline: plan.sleepUntil)
                } while rc == EINTR && doorbell.value == plan.doorbellValue
                wakeups.add(1, ordering: .relaxed)
                guard rc == ETIMEDOUT else { continue }  // the doorbell, or a spurious wake-up: plan again
                if plan.precise {
                    estimator.record(cmc_now_ns(plan.clock) - plan.sleepUntil)
                }
            }
            if plan.spinUntil != .min {
                spin(plan, &due, &batch)
            }
        }
    }

    /// Spins to `plan.spinUntil`, then delivers what is due there.
    ///
    /// On CLOCK_MONOTONIC the fire is prepared first (collected as if it were
    /// already the deadline), so that at the deadline only the handler calls are
    /// left; its ticks are delivered after the spin, never early. The doorbell
    /// stays armed meanwhile (`awake` is false and `plannedWake` is the spin's
    /// end), so a timer that becomes the earliest rings it: the spin then serves
    /// that timer at its own deadline and goes on. A wall-clock spin is not
    /// prepared and gives up after the spin's length on CLOCK_MONOTONIC, so a
    /// backward step of the wall clock leads to a new plan, not a long spin.
    private func spin(_ plan: WaitPlan, _ due: inout [Unmanaged<TimerNode>], _ batch: inout [Tick]) {
        let startMono = cmc_now_ns(cmc_clock_monotonic)
        let budgetEnd = startMono.saturatingAdd(Swift.max(0, plan.spinUntil.saturatingSubtract(cmc_now_ns(plan.clock))))
        if plan.source == .monotonic {
            state.withLock { s in
                collectLocked(&s, &due, &batch, preparing: (plan.source, plan.spinUntil))
            }
        }
        var seen = plan.doorbellValue
        var innerTarget = Int64.max  // on plan.clock: a timer that became the earliest
        var early: [Tick] = []
        while true {
            let n = cmc_now_ns(plan.clock)
            if n >= plan.spinUntil {
                // A timer that became the earliest during the spin and is due by
                // now (the thread was preempted past it) fires in deadline order
                // with the prepared ones, not after them.
                if !batch.isEmpty && (doorbell.value != seen || n >= innerTarget) {
                    state.withLock { s in collectLocked(&s, &due, &early) }
                    if !early.isEmpty {
                        batch = (early + batch).enumerated()
                            .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                            .map(\.element)
                    }
                }
                break
            }
            if plan.source != .monotonic && cmc_now_ns(cmc_clock_monotonic) > budgetEnd { break }
            let bell = doorbell.value
            if bell != seen || n >= innerTarget {
                if batch.isEmpty { return }  // nothing prepared: plan again
                seen = bell
                state.withLock { s in
                    collectLocked(&s, &due, &early)
                    innerTarget = earliestLocked(s, now: self.now).map { n.saturatingAdd($0.remainingLatest) } ?? .max
                }
                if !early.isEmpty {
                    deliver(early)
                    early.removeAll(keepingCapacity: true)
                }
                continue
            }
            cmc_cpu_relax()
        }
        if !batch.isEmpty {
            deliver(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Asks the engine thread to end once no timer is live.
    func requestShutdown() {
        state.withLock { $0.shutdownRequested = true }
        doorbell.bumpAndWake()
    }

    // MARK: - Virtual time

    /// Under virtual time: fires, on the calling thread, everything due at the
    /// clock's current readings (and `fire()` requests) as one wake-up. Returns
    /// whether anything was due.
    func fireDueVirtual() -> Bool {
        var due: [Unmanaged<TimerNode>] = []
        var batch: [Tick] = []
        state.withLock { s in collectLocked(&s, &due, &batch) }
        guard !batch.isEmpty else { return false }
        deliver(batch)
        wakeups.add(1, ordering: .relaxed)
        return true
    }

    /// Under virtual time: when this engine would wake next, as a virtual
    /// CLOCK_MONOTONIC reading: the earliest latest-acceptable instant among its
    /// pending timers (nil when none is pending, or only "never" deadlines).
    func nextVirtualWake() -> Int64? {
        guard let clock = virtualClock else { return nil }
        return state.withLock { s -> Int64? in
            guard let best = earliestLocked(s, now: clock.nanoseconds) else { return nil }
            return clock.nanoseconds(.monotonic).saturatingAdd(Swift.max(0, best.remainingLatest))
        }
    }
}
