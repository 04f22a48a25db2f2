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
    var manualFires: [(node: TimerNode, requestedAt: Int64)] = []
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

    /// Queues a new node (state `.suspended` with its first deadline set).
    func start(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
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

    /// Cancels `node`. With `waitForHandler`, returns only once no handler call of
    /// this timer is running on another thread (a call from inside the handler
    /// does not wait for itself).
    func cancel(_ node: TimerNode, waitForHandler: Bool) {
        let released = state.withLock { s -> TimerNode.Handler? in
            cancelLocked(&s, node)
        }
        if let released { drop(released) }
        guard waitForHandler else { return }
        let me = Unmanaged.passUnretained(node).toOpaque()
        let inside = cmc_current_marker() == me
        while true {
            let seq = state.withLock { s -> UInt32? in
                let others = node.runningCount - (inside ? 1 : 0)
                guard others > 0 else { return nil }
                s.cancelWaiters += 1
                return handlerDone.value
            }
            guard let seq else { return }
            handlerDone.wait(expecting: seq, clock: cmc_clock_monotonic, deadline: .max)
            state.withLock { $0.cancelWaiters -= 1 }
        }
    }

    /// Marks `node` cancelled and takes it off its queue. Returns its handler,
    /// which the caller releases after unlocking (releasing it may run arbitrary
    /// deinits, which must not run under the engine's lock).
    private func cancelLocked(_ s: inout EngineState, _ node: TimerNode) -> TimerNode.Handler? {
        switch node.state {
        case .cancelled:
            return nil
        case .scheduled:
            s.queues[node.source.rawValue].remove(node)
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

    func suspend(_ node: TimerNode) {
        state.withLock { s in
            guard node.state == .scheduled else { return }
            s.queues[node.source.rawValue].remove(node)
            node.state = .suspended
        }
    }

    func resume(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .suspended else { return false }
            if node.isRepeating && node.policy == .burst {
                // Ticks that fell due while suspended are not burst: jump to the
                // latest due tick, and the fire reports the rest as missed.
                let n = now(node.source)
                if node.deadline < n {
                    node.setNextTick(node.nextIndex &+ n.saturatingSubtract(node.deadline) / node.interval)
                }
            }
            return enqueueLocked(&s, node)
        }
        if ring { doorbell.bumpAndWake() }
    }

    /// Requests one handler call now: for a repeating timer without moving the
    /// grid; a one-shot fires now instead of at its deadline.
    func fireNow(_ node: TimerNode) {
        let ring = state.withLock { s -> Bool in
            guard node.state == .scheduled || node.state == .suspended else { return false }
            s.manualFires.append((node, now(node.source)))
            return !s.awake && virtualClock == nil
        }
        if ring { doorbell.bumpAndWake() }
    }

    /// Changes a live timer's schedule under the lock: `body` edits the node
    /// while it is off its queue, then it is queued again.
    func reschedule(_ node: TimerNode, _ body: (TimerNode) -> Void) {
        let ring = state.withLock { s -> Bool in
            switch node.state {
            case .scheduled:
                s.queues[node.source.rawValue].remove(node)
                body(node)
                return enqueueLocked(&s, node)
            case .suspended:
                body(node)
                return false
            case .done, .cancelled:
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
            for (node, requestedAt) in s.manualFires where node.state == .scheduled || node.state == .suspended {
                if !node.isRepeating {
                    // A one-shot fired by hand has fired: it leaves the schedule
                    // (as `Timer.fire()` invalidates a non-repeating timer), so
                    // its one handler call is this one.
                    if node.state == .scheduled { s.queues[node.source.rawValue].remove(node) }
                    node.state = .done
                    s.live -= 1
                }
                batch.append(Tick(index: node.nextIndex, deadline: .init(nanoseconds: requestedAt),
                                  firedAt: .init(nanoseconds: requestedAt), missed: 0, isManual: true, node: node,
                                  interval: node.interval))
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
                batch.append(advanceLocked(&s, ref.takeRetainedValue(), now: now))
            }
            due.removeAll(keepingCapacity: true)
        }
    }

    /// The tick `node` fires now, and its next deadline per its policy.
    private func advanceLocked(_ s: inout EngineState, _ node: TimerNode, now: Int64) -> Tick {
        guard node.isRepeating else {
            node.state = .done
            s.live -= 1
            return Tick(index: 0, deadline: .init(nanoseconds: node.deadline), firedAt: .init(nanoseconds: now),
                        missed: 0, isManual: false, node: node)
        }
        var k = node.nextIndex
        if node.policy == .skip {
            k &+= now.saturatingSubtract(node.deadline) / node.interval
        }
        let deadline = node.deadline(ofTick: k)
        let tick = Tick(index: k, deadline: .init(nanoseconds: deadline), firedAt: .init(nanoseconds: now),
                        missed: k &- node.lastFiredIndex &- 1, isManual: false, node: node, interval: node.interval)
        node.lastFiredIndex = k
        if node.policy == .delay {
            node.anchor(tick: k, at: now)
        }
        node.setNextTick(k &+ 1)
        _ = enqueueLocked(&s, node)
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

    /// Calls the handler for `tick` unless the timer was cancelled meanwhile.
    func run(_ tick: Tick) {
        let node = tick.node
        guard let handler = state.withLock({ s in beginLocked(&s, node) }) else { return }
        let keep = call(handler, tick)
        let released = state.withLock { s in endLocked(&s, node, keep: keep) }
        if let released { drop(released) }
    }

    /// Delivers a batch the engine collected. Inline ticks run one after another
    /// on this thread with one lock round-trip per fire (the end of one call and
    /// the start of the next share it): with 100,000 timers due at once, the lock
    /// is a large part of the cost.
    func deliver(_ batch: [Tick]) {
        var finishing: (node: TimerNode, keep: Bool)?
        for tick in batch {
            guard case .inline = tick.node.delivery else {
                deliver(tick)
                continue
            }
            let node = tick.node
            let (handler, released) = state.withLock { s -> (TimerNode.Handler?, TimerNode.Handler?) in
                let released = finishing.flatMap { endLocked(&s, $0.node, keep: $0.keep) }
                return (beginLocked(&s, node), released)
            }
            finishing = nil
            if let released { drop(released) }
            guard let handler else { continue }
            finishing = (node, call(handler, tick))
        }
        if let last = finishing {
            let released = state.withLock { s in endLocked(&s, last.node, keep: last.keep) }
            if let released { drop(released) }
        }
    }

    /// Marks a handler call of `node` as running and returns the handler, or nil
    /// if the timer was cancelled meanwhile.
    private func beginLocked(_ s: inout EngineState, _ node: TimerNode) -> TimerNode.Handler? {
        guard node.state != .cancelled, let handler = node.handler else { return nil }
        node.runningCount += 1
        if node.state == .done {
            node.handler = nil  // a fired one-shot lets go of its captures after this call
        }
        return handler
    }

    /// Ends a handler call: wakes threads waiting in `cancel()`, and cancels the
    /// timer if the handler asked (a weak owner is gone). Returns a handler to
    /// release after unlocking.
    private func endLocked(_ s: inout EngineState, _ node: TimerNode, keep: Bool) -> TimerNode.Handler? {
        node.runningCount -= 1
        s.fires &+= 1
        if s.cancelWaiters > 0 {
            handlerDone.bumpAndWake()
        }
        return keep ? nil : cancelLocked(&s, node)
    }

    /// Calls `handler` with `tick` stamped with the time of the call, marking
    /// this thread as inside the timer's handler meanwhile.
    @inline(__always)
    private func call(_ handler: TimerNode.Handler, _ tick: Tick) -> Bool {
        let node = tick.node
        let fired = Tick(index: tick.index, deadline: tick.deadline, firedAt: .init(nanoseconds: now(node.source)),
                         missed: tick.missed, isManual: tick.isManual, node: node, interval: tick.interval)
        let previous = cmc_swap_marker(Unmanaged.passUnretained(node).toOpaque())
        let keep = handler(fired)
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

    /// Works out the next wait from the queues. With leeway to spare, the engine
    /// sleeps from the earliest deadline with a timer slack of what it can afford,
    /// so the kernel may wake it anywhere up to the earliest latest-acceptable
    /// instant and everything due then fires in one wake-up. When the most urgent
    /// timer has no leeway to spare, it sleeps to `margin` before that deadline
    /// and spins the rest (or only sleeps, with slack 1 ns, if spinning is off).
    private func planLocked(_ s: inout EngineState, estimator: inout OversleepEstimator) -> WaitPlan {
        var plan = WaitPlan()
        let nowMono = now(.monotonic)
        var bestLatest = Int64.max      // remaining ns until the earliest latest-acceptable
        var bestDeadline = Int64.max    // remaining ns until the earliest deadline
        var bestLeeway: Int64 = 0
        var bestSource = PrecisionClock.Source.monotonic
        var boottimePending = false
        var realtimePending = false
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            let src = PrecisionClock.Source(rawValue: source)!
            let n = src == .monotonic ? nowMono : now(src)
            let l = s.queues[source].byLatest.top!
            let d = s.queues[source].byDeadline.top!
            let remainingLatest = l.latest.saturatingSubtract(n)
            if remainingLatest < bestLatest {
                bestLatest = remainingLatest
                bestLeeway = l.leeway
                bestSource = src
            }
            bestDeadline = Swift.min(bestDeadline, d.deadline.saturatingSubtract(n))
            boottimePending = boottimePending || src == .boottime
            realtimePending = realtimePending || src == .realtime
        }
        guard bestLatest != .max else {
            s.plannedWake = .max
            return plan
        }
        // Wait on the wall clock when a wall-clock timer is the most urgent, so
        // the kernel honours a change of the system time; otherwise on CLOCK_MONOTONIC.
        if bestSource == .realtime {
            plan.clock = cmc_clock_realtime
            plan.source = .realtime
        }
        let base = plan.source == .realtime ? now(.realtime) : nowMono
        let wakeBy = base.saturatingAdd(bestLatest)
        // Spinning is for timers whose leeway the spin margin can still serve;
        // the rest sleep from the earliest deadline with the slack they afford,
        // keeping back the machine's typical oversleep (the learned margin).
        let spinMargin = estimator.margin(forWaitOf: bestLatest)
        if bestLeeway < spinMargin && options.allowsSpinning {
            let deadline = wakeBy.saturatingSubtract(bestLeeway)
            plan.sleepUntil = deadline.saturatingSubtract(spinMargin)
            plan.spinUntil = deadline
        } else {
            // Slack: the kernel may wake the thread anywhere from the earliest
            // deadline to that plus the slack. Keep back the learned oversleep and
            // half of what remains, so a machine hiccup rarely pushes a fire past
            // its window; the other half still batches every timer due by then.
            plan.sleepUntil = base.saturatingAdd(bestDeadline)
            let affordable = wakeBy.saturatingSubtract(estimator.margin).saturatingSubtract(plan.sleepUntil)
            plan.slack = UInt64(Swift.max(1, affordable / 2))
        }
        plan.precise = plan.slack == 1
        if boottimePending || (realtimePending && !WallClockWatcher.shared.isActive) {
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
        s.plannedWake = nowMono.saturatingAdd(bestLatest)
        return plan
    }

    /// The engine thread's body: collect, deliver, plan, wait; until shut down
    /// with no live timers.
    func threadMain() {
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
                if s.shutdownRequested && s.live == 0 && s.manualFires.isEmpty {
                    return true
                }
                s.awake = true
                collectLocked(&s, &due, &batch)
                if batch.isEmpty {
                    plan = planLocked(&s, estimator: &estimator)
                    plan.doorbellValue = doorbell.value
                    s.awake = false
                }
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
                let rc = doorbell.wait(expecting: plan.doorbellValue, clock: plan.clock, deadline: plan.sleepUntil)
                if rc == ETIMEDOUT && plan.precise {
                    estimator.record(cmc_now_ns(plan.clock) - plan.sleepUntil)
                }
            }
            if plan.spinUntil != .min {
                // Prepare the fire while there is time: after the spin only the
                // handler call is left. (On a VM, the first touch of each page
                // after a sleep is slow; this moves those touches before the
                // deadline.)
                if doorbell.value == plan.doorbellValue {
                    state.withLock { s in
                        s.awake = true
                        collectLocked(&s, &due, &batch, preparing: (plan.source, plan.spinUntil))
                    }
                }
                if batch.isEmpty {
                    while cmc_now_ns(plan.clock) < plan.spinUntil && doorbell.value == plan.doorbellValue {
                        cmc_cpu_relax()
                    }
                } else {
                    // Prepared ticks never fire early: a timer added meanwhile
                    // waits for them (at most the spin margin).
                    _ = cmc_spin_until(plan.clock, plan.spinUntil)
                    wakeups.add(1, ordering: .relaxed)
                    deliver(batch)
                    batch.removeAll(keepingCapacity: true)
                    continue
                }
            }
            wakeups.add(1, ordering: .relaxed)
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
            var bestLatest = Int64.max
            for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
                let src = PrecisionClock.Source(rawValue: source)!
                let l = s.queues[source].byLatest.top!
                guard l.latest != .max else { continue }
                bestLatest = Swift.min(bestLatest, l.latest.saturatingSubtract(clock.nanoseconds(src)))
            }
            guard bestLatest != .max else { return nil }
            return clock.nanoseconds(.monotonic).saturatingAdd(Swift.max(0, bestLatest))
        }
    }
}
