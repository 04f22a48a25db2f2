import CMonoClock
import Dispatch
import Logging

/// Collecting what is due, advancing each timer on its grid, and delivering
/// the ticks: inline on the calling thread or on a dispatch queue.
extension TimerEngine {

    /// Pops every node due at its clock's current time, advances repeating ones
    /// on their grid (re-queued at once, so the grid never waits for the
    /// handler), and appends one tick per fire to `batch`.
    ///
    /// With `preparing`, that clock's timers due by the given instant are taken
    /// as if it were already that instant: the engine prepares the fire before a
    /// deadline it is about to spin to, so that at the deadline only the handler
    /// call is left (its ticks are delivered after the spin, never early).
    ///
    /// `monotonicNow`, a reading of CLOCK_MONOTONIC the caller took a moment
    /// ago (the end of the last handler call), stands for that clock's "now"
    /// instead of a new read: a reading from the past can only take fewer
    /// timers, never one early; those it leaves are due at the next look.
    ///
    /// With `parks`, a repeating timer stays off its queue until the tick
    /// taken now has been delivered or dropped, as one delivered on a queue
    /// does: what a spin collects may wait for the spin's end, and the timer's
    /// next tick must not be collected (and overtake it) meanwhile.
    ///
    /// At most `limit` timers are taken (the engine thread takes
    /// ``collectionLimit``): the rest stay queued in order for the next look,
    /// so the first handler of a million-timer instant runs as soon as the
    /// first of them are collected.
    func collectLocked(_ s: inout EngineState, _ due: inout [Unmanaged<TimerNode>], _ batch: inout [Tick],
                       preparing: (source: PrecisionClock.Source, instant: Int64)? = nil,
                       parks: Bool = false, monotonicNow: Int64? = nil, limit: Int = .max) {
        if !s.manualFires.isEmpty {
            for (node, requestedAt, epoch) in s.manualFires
            where (node.state == .scheduled || node.state == .suspended) && node.epoch == epoch {
                if !node.isRepeating {
                    // A one-shot fired by hand has fired: it leaves the schedule
                    // (as `Timer.fire()` invalidates a non-repeating timer), so
                    // its one handler call is this one.
                    if node.state == .scheduled { s.queues[node.source.rawValue].remove(node) }
                    // Suspended again if this fire is dropped by a reschedule.
                    node.suspendedBeforeFire = node.state == .suspended
                    node.state = .collected
                }
                // A repeating timer's pending tick is the prepared one while it is not due.
                let pending = scheduleBeforePreparedFireLocked(s, node) ?? node.grid
                batch.append(Tick(index: pending.nextIndex, deadline: .init(nanoseconds: requestedAt),
                                  firedAt: .init(nanoseconds: requestedAt), missed: 0, isManual: true, node: node,
                                  period: node.period, epoch: epoch))
            }
            s.manualFires.removeAll(keepingCapacity: true)
        }
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            let src = PrecisionClock.Source(rawValue: source)!
            // A deadline saturated at Int64.max means "never": it is not due
            // even when (virtual) time reaches the end of the range.
            let read = src == .monotonic ? monotonicNow ?? self.now(src) : self.now(src)
            let now = Swift.min(preparing?.source == src ? preparing!.instant : read, .max - 1)
            s.queues[source].removeDue(at: now, into: &due, limit: Swift.max(0, limit - batch.count))
            for ref in due {
                batch.append(advanceLocked(&s, ref.takeRetainedValue(), now: now, prepares: preparing != nil,
                                           parks: parks))
            }
            due.removeAll(keepingCapacity: true)
        }
    }

    /// The tick `node` fires now, and its next deadline per its policy. A
    /// repeating node goes back on its queue at once, unless its tick is
    /// delivered on a queue, prepared ahead of a spin (`prepares`) or
    /// collected during one (`parks`): then it stays off the queue until that
    /// tick has been delivered or dropped, so that at most one tick of a timer
    /// is outstanding and its next tick can never overtake this one. A prepared fire is marked
    /// (``TimerNode/isPrepared``), with a repeating timer's grid as it was, so
    /// that it can be taken back until its deadline.
    func advanceLocked(_ s: inout EngineState, _ node: TimerNode, now: Int64, prepares: Bool,
                       parks: Bool = false) -> Tick {
        node.isPrepared = prepares
        guard node.isRepeating else {
            node.state = .collected  // fired (and no longer live) when its call begins
            return Tick(index: 0, deadline: .init(nanoseconds: node.deadline), firedAt: .init(nanoseconds: now),
                        missed: 0, isManual: false, node: node, epoch: node.epoch)
        }
        if prepares { node.gridBeforePrepared = node.grid }
        let fired = node.grid.fire(at: now, policy: node.policy)
        var tick = Tick(index: fired.index, deadline: .init(nanoseconds: fired.deadline),
                        firedAt: .init(nanoseconds: now), missed: fired.missed, isManual: false, node: node,
                        period: node.period, epoch: node.epoch)
        tick.withdrawals = node.withdrawals
        tick.nextDeadline = node.deadline
        if case .inline = node.delivery, !prepares && !parks {
            _ = enqueueLocked(&s, node)
        } else {
            node.state = .scheduled
            node.inFlight = true  // queued again once this tick is delivered or dropped
        }
        return tick
    }

    /// The most timers the engine thread collects before it delivers them.
    static let collectionLimit = 1_024

    /// Delivers `tick` where its timer asked.
    @inline(__always)
    func deliver(_ tick: Tick, onEngineThread: Bool = false) {
        switch tick.node.delivery {
        case .inline:
            run(tick, onEngineThread: onEngineThread)
        case .queue(let queue):
            queue.async { tick.node.engine.run(tick) }
        }
    }

    /// Calls the handler for `tick` unless the timer was cancelled or suspended
    /// since the tick was collected. The handler (and what it captured) is
    /// released only after the end of the call is recorded, so a deinit it runs
    /// never finds the call still counted as running. On the thread that fires
    /// the engine's ticks, with statistics on, the call's run time is recorded.
    func run(_ delivered: Tick, onEngineThread: Bool = false) {
        var tick = delivered
        var wakes = Wakes()
        let begun = state.withLock { s -> TimerNode.Handler? in
            defer { assertInvariantsLocked(&s, tick.node) }
            let handler = beginLocked(&s, &tick, &wakes)
            if handler == nil && requeueAfterDeliveryLocked(&s, &tick) { wakes.doorbell = true }
            return handler
        }
        ring(wakes)
        guard let handler = begun else { return }
        let outcome = invoke(handler, &tick, onEngineThread: onEngineThread)  // stamps it, as a batch's
        let runTime = outcome.startedAt >= 0 && outcome.keep
            ? endRun(tick, start: outcome.startedAt, at: now(.monotonic)) : nil
        wakes = Wakes()
        let released = state.withLock { s in
            defer { assertInvariantsLocked(&s, tick.node) }
            if let runTime { s.statistics.handlerTime.record(nanoseconds: runTime) }
            return endLocked(&s, &tick, outcome, &wakes)
        }
        ring(wakes)
        if let released { drop(released) }
        withExtendedLifetime(handler) {}
    }

    /// Delivers a batch the engine collected. Inline ticks run one after another
    /// on this thread with one lock round-trip per fire (the end of one call and
    /// the start of the next share it): with 100,000 timers due at once, the lock
    /// is a large part of the cost. Each tick is handed to its handler where
    /// it lies in `batch`, stamped with the time of its call: no copy, no
    /// reference counting per fire beyond the handler's.
    ///
    /// With statistics on, an inline call's run time ends at the next
    /// CLOCK_MONOTONIC reading this thread takes: the next call's start (so it
    /// includes the engine's step between the two), or a reading after the
    /// last call, which it returns (nil when none was timed) for the thread's
    /// next collection to use instead of reading the clock again. A batch of
    /// fires reads the clock once per fire, as with statistics off.
    @discardableResult
    func deliver(_ batch: inout [Tick]) -> Int64? {
        batch.withUnsafeMutableBufferPointer { deliver(inPlace: $0) }
    }

    /// ``deliver(_:)`` on the batch's storage: each tick is read and stamped
    /// where it lies, never copied (a copy of a tick retains its timer).
    private func deliver(inPlace batch: UnsafeMutableBufferPointer<Tick>) -> Int64? {
        // The inline call begun last, whose end is not recorded yet (-1: none):
        // where its tick lies, what it left, and its handler, kept until then.
        var finishing = -1
        var finishingOutcome = Outcome(keep: true, firedAt: 0)
        var finishingHandler: TimerNode.Handler?
        // The last inline call, returned, whose run time ends at the next reading.
        var unended = -1
        var unendedStart: Int64 = 0
        // A run time measured and not yet recorded.
        var runTime: Int64?
        for i in batch.indices {
            guard case .inline = batch[i].node.delivery else {
                if unended >= 0 {
                    let ended = endRun(batch[unended], start: unendedStart, at: now(.monotonic))
                    state.withLock { s in
                        if let runTime { s.statistics.handlerTime.record(nanoseconds: runTime) }
                        s.statistics.handlerTime.record(nanoseconds: ended)
                    }
                    unended = -1
                    runTime = nil
                }
                deliver(batch[i])
                continue
            }
            var wakes = Wakes()
            let (begun, released) = state.withLock { s -> (TimerNode.Handler?, TimerNode.Handler?) in
                defer { assertInvariantsLocked(&s, batch[i].node) }
                var released: TimerNode.Handler?
                if finishing >= 0 {
                    released = endLocked(&s, &batch[finishing], finishingOutcome, &wakes)
                }
                if let runTime { s.statistics.handlerTime.record(nanoseconds: runTime) }
                let handler = beginLocked(&s, &batch[i], &wakes)
                if handler == nil && requeueAfterDeliveryLocked(&s, &batch[i]) { wakes.doorbell = true }
                return (handler, released)
            }
            finishing = -1
            finishingHandler = nil  // the previous handler goes now that its end is recorded
            runTime = nil
            ring(wakes)
            if let released { drop(released) }
            guard let handler = begun else { continue }
            let outcome = invoke(handler, &batch[i], onEngineThread: true)
            if unended >= 0 { runTime = endRun(batch[unended], start: unendedStart, at: outcome.startedAt) }
            // A call that did not run (a weak owner gone) has no run time.
            (unended, unendedStart) = outcome.startedAt >= 0 && outcome.keep ? (i, outcome.startedAt) : (-1, 0)
            (finishing, finishingOutcome, finishingHandler) = (i, outcome, handler)
        }
        var lastReading: Int64?
        if unended >= 0 {
            let reading = now(.monotonic)
            let ended = endRun(batch[unended], start: unendedStart, at: reading)
            lastReading = reading
            unended = -1
            if let earlier = runTime {
                state.withLock { $0.statistics.handlerTime.record(nanoseconds: earlier) }
            }
            runTime = ended
        }
        if finishing >= 0 || runTime != nil {
            var wakes = Wakes()
            let released = state.withLock { s -> TimerNode.Handler? in
                if let runTime { s.statistics.handlerTime.record(nanoseconds: runTime) }
                guard finishing >= 0 else { return nil }
                defer { assertInvariantsLocked(&s, batch[finishing].node) }
                return endLocked(&s, &batch[finishing], finishingOutcome, &wakes)
            }
            finishing = -1
            finishingHandler = nil
            ring(wakes)
            if let released { drop(released) }
        }
        withExtendedLifetime(finishingHandler) {}
        return lastReading
    }

    /// The run time of an inline call of `tick` that started at `start` and
    /// whose end was read at `end` (both CLOCK_MONOTONIC); logs it when it
    /// passed the slow-call threshold.
    func endRun(_ tick: Tick, start: Int64, at end: Int64) -> Int64 {
        let ranFor = end &- start
        if ranFor > options.slowCallThreshold { logSlowCall(tick, ranFor: ranFor) }
        return ranFor
    }

    /// Logs (at `debug`) an inline handler call that held the thread past the
    /// slow-call threshold: every timer due meanwhile waited for it.
    func logSlowCall(_ tick: Tick, ranFor: Int64) {
        options.logger.debug("inline timer handler ran past the slow-call threshold", metadata: [
            "scheduler": "\(options.name)",
            "ran_ns": "\(ranFor)",
            "threshold_ns": "\(options.slowCallThreshold)",
            "deadline_ns": "\(tick.deadline.nanoseconds)",
            "clock": "\(tick.node.source)",
        ])
    }

    /// Marks a handler call of `tick`'s timer as running and returns it, or nil
    /// when the tick is not to be delivered: it was prepared and withdrawn
    /// before its deadline (inert: the timer was queued again as if it had
    /// never been collected), the timer was cancelled, or it was suspended
    /// since the tick was collected (a dropped grid tick is carried as missed
    /// to the next tick delivered).
    ///
    /// This, ``requeueAfterDeliveryLocked(_:_:)`` and ``endLocked(_:_:_:_:)``
    /// take the tick `inout` to read it where it lies in the batch: a copy of
    /// a tick retains its timer. Only this changes it, adding to a grid tick
    /// the dropped ticks its timer carries (``TimerNode/droppedMissed``).
    func beginLocked(_ s: inout EngineState, _ tick: inout Tick, _ wakes: inout Wakes) -> TimerNode.Handler? {
        let node = tick.node
        guard !isWithdrawn(tick) else { return nil }
        guard node.state != .cancelled, let handler = node.handler else { return nil }
        guard tick.epoch == node.epoch else {
            if !tick.isManual && node.isRepeating
                && !node.grid.drop(firedTick: Int64(tick.index), missed: Int64(tick.missed)) {
                node.droppedMissed &+= Int64(tick.missed) &+ 1
            }
            return nil
        }
        if !tick.isManual {
            node.isPrepared = false  // its deadline has come
            if node.isRepeating && node.droppedMissed != 0 {
                tick.missed &+= Int(node.droppedMissed)
                node.droppedMissed = 0
            }
        }
        beginCallLocked(&s, node)
        if node.state == .collected {
            // The one-shot fires now, not when it was collected: `hasFired` and
            // the live count never run ahead of the handler call.
            node.state = .done
            node.suspendedBeforeFire = false
            s.live -= 1
            // A released scheduler's thread waits for its last live timer,
            // which may be this one, delivered on a queue.
            if s.shutdownRequested && s.live == 0 { wakes.doorbell = true }
        }
        return handler
    }

    /// Whether `tick` is a repeating timer's tick prepared ahead of a spin and
    /// withdrawn before its deadline (see ``withdrawPreparedLocked(_:_:)``):
    /// it does nothing when its turn comes, and the timer's in-flight mark and
    /// grid belong to what came after it.
    @inline(__always)
    func isWithdrawn(_ tick: Tick) -> Bool {
        !tick.isManual && tick.withdrawals != tick.node.withdrawals
    }

    /// Counts a handler call of `node` as running: the first in the node's
    /// flag, any more at once in `extraCalls`.
    func beginCallLocked(_ s: inout EngineState, _ node: TimerNode) {
        if node.isRunning {
            s.extraCalls[ObjectIdentifier(node), default: 0] += 1
        } else {
            node.isRunning = true
        }
    }

    /// Counts a handler call of `node` as ended.
    func endCallLocked(_ s: inout EngineState, _ node: TimerNode) {
        let id = ObjectIdentifier(node)
        if !s.extraCalls.isEmpty, let extra = s.extraCalls[id] {
            s.extraCalls[id] = extra > 1 ? extra - 1 : nil
        } else {
            assert(node.isRunning, "PrecisionTimer invariant: a handler call ended that had not begun")
            node.isRunning = false
        }
    }

    /// A queue-delivered grid tick has run or been dropped: its timer goes back
    /// on its queue (unless suspended or cancelled meanwhile). Returns whether
    /// the engine thread must be woken.
    func requeueAfterDeliveryLocked(_ s: inout EngineState, _ tick: inout Tick) -> Bool {
        let node = tick.node
        guard !tick.isManual, !isWithdrawn(tick), node.inFlight else { return false }
        node.inFlight = false
        guard node.state == .scheduled else { return false }
        return enqueueLocked(&s, node)
    }

    /// Ends a handler call: records the wake of threads waiting in `cancel()`,
    /// puts a queue-delivered tick's timer back on its queue, and cancels the
    /// timer if the handler asked (a weak owner is gone). Returns a handler to
    /// release after unlocking.
    func endLocked(_ s: inout EngineState, _ tick: inout Tick, _ outcome: Outcome, _ wakes: inout Wakes)
        -> TimerNode.Handler?
    {
        let node = tick.node
        endCallLocked(&s, node)
        // A fire by hand has no deadline, so no lateness; nor has a fire whose
        // reading is before its deadline on a wall clock that was set back.
        let lateness: Int64? = tick.isManual || outcome.firedAt < tick.deadline.nanoseconds
            ? nil : outcome.firedAt &- tick.deadline.nanoseconds
        // A sleep resumed ahead of its deadline by a spin (the only fire
        // before its deadline on a clock that never steps back; see
        // TimerEngine+EarlyResume.swift): its task's own code runs once the
        // spin reaches the deadline, and the thread records its lateness then.
        if outcome.keep && !tick.isManual && lateness == nil && node.source == .monotonic
            && options.recordsStatistics {
            s.earlyResumedFires.append((tick.deadline.nanoseconds, s.statistics.resets))
        }
        // A handler that asked to stop without running (a weak owner gone)
        // made no call: no fire, lateness or missed tick is recorded for it.
        if outcome.keep {
            if let lateness, node.recordsLateness {
                s.latenessRecords[ObjectIdentifier(node), default: LatencyHistogram()].record(nanoseconds: lateness)
            }
            // The handler's run time is recorded by `deliver(_:)`, once the
            // next reading ends it (by `run(_:onEngineThread:)` under
            // virtual time, with a reading after the call).
            s.statistics.record(fireOn: node.source.rawValue,
                                latenessNanoseconds: options.recordsStatistics ? lateness : nil,
                                missed: Int(tick.missed), handlerNanoseconds: nil)
        }
        if s.cancelWaiters > 0 { wakes.handlerDone = true }
        if requeueAfterDeliveryLocked(&s, &tick) { wakes.doorbell = true }
        guard !outcome.keep else { return nil }
        let released = cancelLocked(&s, node, &wakes)
        // The handler asked to stop without running (a weak owner is gone): a
        // one-shot ends cancelled, not fired (cancel leaves a fired one fired).
        if node.state == .done { node.state = .cancelled }
        return released
    }

    /// What a handler call left: whether the timer goes on, when the call
    /// began on the timer's clock, and on CLOCK_MONOTONIC (-1: not timed, off
    /// the engine's thread or with statistics off).
    struct Outcome {
        var keep: Bool
        var firedAt: Int64
        var startedAt: Int64 = -1
    }

    /// Calls `handler` with `tick` stamped with the time of the call, marking
    /// this thread as inside the timer's handler meanwhile. On the engine's
    /// thread, with statistics on, it notes the start on CLOCK_MONOTONIC too
    /// (the timer's reading when that is its clock).
    @inline(__always)
    func invoke(_ handler: TimerNode.Handler, _ tick: inout Tick, onEngineThread: Bool) -> Outcome {
        let source = tick.node.source
        let firedAt = now(source)
        tick.firedAt = .init(nanoseconds: firedAt)
        let timed = onEngineThread && options.recordsStatistics
        let start = !timed || source == .monotonic ? firedAt : now(.monotonic)
        let previous = cmc_swap_no_wait_marker(Unmanaged.passUnretained(tick.node).toOpaque())
        let keep = handler(tick)
        cmc_swap_no_wait_marker(previous)
        return Outcome(keep: keep, firedAt: firedAt, startedAt: timed ? start : -1)
    }


    // MARK: - Virtual time

    /// Fires, on the calling thread, everything due at the clock's current
    /// readings (and `fire()` requests) as one wake-up: how a ``VirtualClock``
    /// drives the engine. Returns whether anything was due or waiting.
    ///
    /// The collected ticks join the engine's ``EngineState/virtualDeliveries``
    /// and are taken from its front one at a time. A handler that advances
    /// the clock calls this again inside its call (a nested advance): the
    /// ticks collected with its own, still waiting, then run first, and what
    /// falls due on the way after them, so every timer's ticks keep their
    /// order and a tick dropped as stale still hands its missed count on.
    func fireDue() -> Bool {
        var due: [Unmanaged<TimerNode>] = []
        var batch: [Tick] = []
        let waiting = state.withLock { s -> Bool in
            collectLocked(&s, &due, &batch)
            assertInvariantsLocked(&s)
            let waiting = !s.virtualDeliveries.isEmpty
            s.virtualDeliveries.append(contentsOf: batch)
            return waiting
        }
        guard waiting || !batch.isEmpty else { return false }
        if !batch.isEmpty { wakeups.add(1, ordering: .relaxed) }
        batch.removeAll()
        // The handlers run isolated to the engine, as on a real scheduler's thread.
        let previous = deliveringThread.exchange(cmc_thread_id(), ordering: .acquiringAndReleasing)
        while let tick = state.withLock({ $0.virtualDeliveries.popFirst() }) {
            deliver(tick, onEngineThread: true)
        }
        deliveringThread.store(previous, ordering: .releasing)
        return true
    }

    /// When this engine must wake next, as a CLOCK_MONOTONIC reading of its
    /// clock: the earliest latest-acceptable instant among its pending timers
    /// (nil when none is pending, or only "never" deadlines).
    func nextWake() -> Int64? {
        state.withLock { s -> Int64? in
            for source in s.queues.indices { s.queues[source].settle() }
            guard let best = earliestLocked(s, now: clock.nanoseconds, includesWheel: false) else { return nil }
            return clock.nanoseconds(.monotonic).saturatingAdd(Swift.max(0, best.remainingLatest))
        }
    }
}
