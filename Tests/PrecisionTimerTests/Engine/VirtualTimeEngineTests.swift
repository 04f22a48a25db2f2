@testable import PrecisionTimer
import Synchronization
import XCTest

/// The engine's semantics under virtual time: exact deadlines, no sleeping.
final class VirtualTimeEngineTests: XCTestCase {
    let ms: Int64 = 1_000_000

    func testRepeatingTimerIsDriftFreeOverOneHundredThousandTicks() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(1)
        let interval: Int64 = 1_000_003  // not a round number: no accidental alignment
        let errors = Atomic<Int>(0)
        let count = Atomic<Int64>(0)
        let timer = try scheduler.repeating(every: .nanoseconds(interval), startingAt: start) { tick in
            let k = count.wrappingAdd(1, ordering: .relaxed).oldValue
            if tick.index != k || tick.deadline.nanoseconds != start.nanoseconds + k * interval || tick.missed != 0
                || tick.firedAt < tick.deadline {
                errors.add(1, ordering: .relaxed)
            }
            // Every handler "runs" for a varying part of the interval: lateness
            // must not accumulate into the grid.
            clock.busy(for: .nanoseconds(k % 997 * 1_000))
        }
        clock.advance(to: start + .nanoseconds(interval * 99_999))
        XCTAssertEqual(count.load(ordering: .relaxed), 100_000)
        XCTAssertEqual(errors.load(ordering: .relaxed), 0)
        XCTAssertEqual(timer.nextDeadline?.nanoseconds, start.nanoseconds + 100_000 * interval,
                       "after 100,000 ticks the schedule has not moved by a nanosecond")
    }

    func testSkipPolicyFiresOnceReportsMissedAndKeepsTheGrid() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start) { tick in
            ticks.append(tick)
            if tick.index == 0 { clock.busy(for: .milliseconds(25)) }  // overrun: 2.5 intervals
        }
        clock.advance(to: start + .milliseconds(40))
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [0, 2, 3, 4])
        XCTAssertEqual(t.map(\.missed), [0, 1, 0, 0])
        XCTAssertEqual(t[1].deadline, start + .milliseconds(20))
        XCTAssertEqual(t[1].firedAt, start + .milliseconds(25), "the late tick fires at once, once")
        XCTAssertEqual(t[2].deadline, start + .milliseconds(30), "grid kept")
        XCTAssertEqual(t[2].firedAt, start + .milliseconds(30))
        XCTAssertEqual(timer.nextDeadline, start + .milliseconds(50))
    }

    func testSeedScenarioTheSchedulerBusyForTwoAndAHalfIntervalsBetweenTicks() throws {
        // Seed 000's log: a 2 s timer; the thread is blocked 1 s after a tick for
        // 5 s; the next fire happens once, reports 2 missed, and the grid is kept.
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .seconds(2)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .seconds(2), startingAt: start) { ticks.append($0) }
        let blocker = scheduler.schedule(at: start + .seconds(1)) { _ in clock.busy(for: .seconds(5)) }
        clock.advance(to: start + .seconds(8))
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [0, 3, 4])
        XCTAssertEqual(t.map(\.missed), [0, 2, 0])
        XCTAssertEqual(t[1].firedAt, start + .seconds(6))
        XCTAssertEqual(t[2].deadline, start + .seconds(8))
        withExtendedLifetime((timer, blocker)) {}
    }

    func testBurstPolicyRunsEveryMissedTickBackToBack() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start, policy: .burst) { tick in
            ticks.append(tick)
            if tick.index == 0 { clock.busy(for: .milliseconds(25)) }
        }
        clock.advance(to: start + .milliseconds(30))
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [0, 1, 2, 3])
        XCTAssertEqual(t.map(\.missed), [0, 0, 0, 0])
        XCTAssertEqual(t[1].firedAt, start + .milliseconds(25))
        XCTAssertEqual(t[2].firedAt, start + .milliseconds(25), "back to back")
        XCTAssertEqual(t[3].firedAt, start + .milliseconds(30))
        withExtendedLifetime(timer) {}
    }

    func testDelayPolicyReanchorsAtTheLateFire() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start, policy: .delay) { tick in
            ticks.append(tick)
            if tick.index == 0 { clock.busy(for: .milliseconds(25)) }
        }
        clock.advance(to: start + .milliseconds(50))
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [0, 1, 2, 3])
        XCTAssertEqual(t.map { $0.firedAt - start }, [.zero, .milliseconds(25), .milliseconds(35), .milliseconds(45)])
        XCTAssertEqual(t[2].deadline, start + .milliseconds(35), "fixed delay: the grid moved to the late fire")
        withExtendedLifetime(timer) {}
    }

    func testLeewayCoalescesWakeUpsAndNeverFiresEarlyOrLate() throws {
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now()
        let fired = Recorder<(String, PrecisionClock.Instant, PrecisionClock.Instant)>()
        func add(_ name: String, at ms: Int64, leeway: Duration) throws -> OneShotTimer {
            scheduler.schedule(at: t0 + .milliseconds(ms), leeway: leeway) { tick in
                fired.append((name, tick.deadline, tick.firedAt))
            }
        }
        let timers = [
            try add("A", at: 10, leeway: .milliseconds(5)),
            try add("B", at: 12, leeway: .milliseconds(5)),
            try add("C", at: 14, leeway: .milliseconds(50)),
            try add("D", at: 20, leeway: .zero),
            try add("E", at: 16, leeway: .milliseconds(10)),
        ]
        let wakeupsBefore = scheduler.statistics.wakeups
        clock.advance(by: .milliseconds(100))
        let f = fired.all
        // One wake at A's latest instant (15 ms) fires A, B and C together; D has
        // no leeway and fires exactly at 20 ms, taking E (due 16) with it.
        XCTAssertEqual(f.map(\.0), ["A", "B", "C", "E", "D"])
        XCTAssertEqual(f.map { $0.2 - t0 }, [.milliseconds(15), .milliseconds(15), .milliseconds(15),
                                             .milliseconds(20), .milliseconds(20)])
        XCTAssertEqual(scheduler.statistics.wakeups - wakeupsBefore, 2)
        for (_, deadline, firedAt) in f {
            XCTAssertGreaterThanOrEqual(firedAt, deadline, "never early")
        }
        withExtendedLifetime(timers) {}
    }

    func testManyTimersWithLeewayCostFewWakeUps() throws {
        let (scheduler, clock) = makeScheduler()
        let early = Atomic<Int>(0)
        let late = Atomic<Int>(0)
        let fires = Atomic<Int>(0)
        var timers: [RepeatingTimer] = []
        let leeway: Int64 = 5 * ms
        for i in 0..<500 {
            let period = Duration.nanoseconds(10 * ms + Int64(i) * 40 * ms / 500)
            timers.append(scheduler.repeating(every: period, leeway: .nanoseconds(leeway)) { tick in
                fires.add(1, ordering: .relaxed)
                if tick.firedAt < tick.deadline { early.add(1, ordering: .relaxed) }
                if tick.latenessNanoseconds > leeway { late.add(1, ordering: .relaxed) }
            })
        }
        clock.advance(by: .seconds(2))
        let wakeups = scheduler.statistics.wakeups
        XCTAssertEqual(early.load(ordering: .relaxed), 0)
        XCTAssertEqual(late.load(ordering: .relaxed), 0)
        XCTAssertGreaterThan(fires.load(ordering: .relaxed), 30_000)
        // Without coalescing every fire would be a wake-up; with 5 ms of leeway at
        // most one wake-up per 5 ms is needed.
        XCTAssertLessThanOrEqual(wakeups, 2_000 / 5 + 1)
        withExtendedLifetime(timers) {}
    }

    func testZeroLeewayTimersFireExactlyAtTheirDeadlines() throws {
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now()
        let fired = Recorder<PrecisionClock.Instant>()
        let timers = (1...5).map { i in
            scheduler.schedule(at: t0 + .microseconds(Int64(i) * 333)) { fired.append($0.firedAt) }
        }
        clock.advance(by: .seconds(1))
        XCTAssertEqual(fired.all, (1...5).map { t0 + .microseconds(Int64($0) * 333) })
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        withExtendedLifetime(timers) {}
    }

    func testTimersDueAtTheSameInstantFireInSchedulingOrder() throws {
        let (scheduler, clock) = makeScheduler()
        let at = clock.now() + .milliseconds(1)
        let order = Recorder<Int>()
        let timers = (0..<50).map { i in scheduler.schedule(at: at) { _ in order.append(i) } }
        clock.advance(by: .milliseconds(2))
        XCTAssertEqual(order.all, Array(0..<50))
        withExtendedLifetime(timers) {}
    }

    /// A handler that advances the clock (a nested advance) first runs the
    /// ticks collected with its own, then the ticks that fall due on the way,
    /// in deadline order: a repeating timer's ticks come in index order, each
    /// called at its deadline.
    func testANestedAdvanceRunsTheTicksCollectedBeforeItFirst() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let advancer = scheduler.schedule(at: start) { _ in clock.advance(by: .milliseconds(25)) }
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start) { ticks.append($0) }
        clock.advance(to: start)
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [0, 1, 2])
        XCTAssertEqual(t.map(\.firedAt), [start, start + .milliseconds(10), start + .milliseconds(20)],
                       "the tick collected with the advancer runs before time moves")
        XCTAssertEqual(t.map(\.missed), [0, 0, 0])
        XCTAssertEqual(clock.now(), start + .milliseconds(25))
        XCTAssertEqual(timer.nextDeadline, start + .milliseconds(30))
        withExtendedLifetime(advancer) {}
    }

    /// The same with a timer that overruns inside the nested advance: its
    /// ticks still come in index order, and every missed tick is counted once.
    func testANestedAdvanceKeepsTheMissedCountOfEachTick() throws {
        for policy in [MissedTickPolicy.skip, .burst, .delay] {
            let (scheduler, clock) = makeScheduler()
            let start = clock.now() + .milliseconds(10)
            let ticks = Recorder<Tick>()
            let advancer = scheduler.schedule(at: start) { _ in clock.advance(by: .milliseconds(45)) }
            let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start, policy: policy) { tick in
                ticks.append(tick)
                if tick.index == 1 { clock.busy(for: .milliseconds(25)) }
            }
            clock.advance(to: start + .milliseconds(60))
            let t = ticks.all
            XCTAssertEqual(t.first?.index, 0, "\(policy)")
            XCTAssertEqual(t.first?.firedAt, start, "\(policy)")
            for (a, b) in zip(t, t.dropFirst()) {
                XCTAssertLessThan(a.index, b.index, "\(policy): \(t.map(\.index))")
                XCTAssertLessThanOrEqual(a.firedAt, b.firedAt, "\(policy)")
            }
            XCTAssertTrue(t.allSatisfy { $0.firedAt >= $0.deadline }, "\(policy): never early")
            if policy != .delay {
                XCTAssertEqual(t.reduce(0) { $0 + $1.missed + 1 }, (t.last?.index ?? -1) + 1,
                               "\(policy): each tick called or counted missed once")
            }
            withExtendedLifetime((advancer, timer)) {}
        }
    }

    /// A nested advance collects a repeating timer's next tick while its
    /// earlier one waits; a suspend then drops both. Each dropped tick, and
    /// the ticks it reported missed, is counted once in the first tick after
    /// the resume.
    func testASuspendDroppingTwoWaitingTicksOfOneTimerCountsBoth() throws {
        for policy in [MissedTickPolicy.skip, .burst] {
            let (scheduler, clock) = makeScheduler()
            let t0 = clock.now() + .milliseconds(10)
            let ticks = Recorder<Tick>()
            let holder = Locked<RepeatingTimer?>(nil)
            // A, S and R's tick 0 are collected together at t0, in that order.
            let a = scheduler.schedule(at: t0) { _ in
                clock.busy(for: .milliseconds(25))  // R's ticks 1 and 2 fall due meanwhile
                clock.advance(by: .zero)  // collects R's next tick while its tick 0 waits
            }
            let s = scheduler.schedule(at: t0) { _ in holder.withLock { $0 }?.suspend() }
            let r = try scheduler.repeating(every: .milliseconds(10), startingAt: t0, policy: policy) { ticks.append($0) }
            holder.withLock { $0 = r }
            clock.advance(to: t0)
            XCTAssertTrue(ticks.all.isEmpty, "\(policy): both waiting ticks were dropped")
            r.resume()  // at t0 + 25 ms
            clock.advance(by: .milliseconds(30))
            let t = ticks.all
            switch policy {
            case .skip:
                XCTAssertEqual(t.map(\.index), [3, 4, 5])
                XCTAssertEqual(t.map(\.missed), [3, 0, 0], "ticks 0 (dropped), 1 and 2 (dropped with it), 3 fires")
            default:
                XCTAssertEqual(t.map(\.index), [2, 3, 4, 5])
                XCTAssertEqual(t.map(\.missed), [2, 0, 0, 0], "ticks 0 and 1 dropped, tick 2 fires at the resume")
            }
            XCTAssertEqual(t.reduce(0) { $0 + $1.missed + 1 }, (t.last?.index ?? -1) + 1,
                           "\(policy): each tick called or counted missed once")
            holder.withLock { $0 = nil }
            withExtendedLifetime((a, s, r)) {}
        }
    }

    /// The same when the later tick is collected after the resume: the
    /// earlier tick is dropped, and the later one, delivered, reports it.
    func testATickDroppedWhileALaterOneWaitsIsCountedInThatOne() throws {
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let holder = Locked<RepeatingTimer?>(nil)
        let a = scheduler.schedule(at: t0) { _ in
            clock.busy(for: .milliseconds(25))
            holder.withLock { $0 }?.suspend()  // drops R's waiting tick 0
            holder.withLock { $0 }?.resume()
            clock.advance(by: .zero)  // collects R's tick 2 (1 missed), then delivers both
        }
        let r = try scheduler.repeating(every: .milliseconds(10), startingAt: t0) { ticks.append($0) }
        holder.withLock { $0 = r }
        clock.advance(to: t0 + .milliseconds(40))
        let t = ticks.all
        XCTAssertEqual(t.map(\.index), [2, 3, 4])
        XCTAssertEqual(t.map(\.missed), [2, 0, 0], "tick 0 dropped and tick 1 missed, reported by tick 2")
        XCTAssertEqual(t.first?.firedAt, t0 + .milliseconds(25))
        holder.withLock { $0 = nil }
        withExtendedLifetime((a, r)) {}
    }

    func testManyTimersDueAtOnceFireInOrderAndTheRestStayQueued() throws {
        // Past a batch size the engine removes due timers in bulk: same semantics.
        let (scheduler, clock) = makeScheduler()
        let t0 = clock.now()
        let order = Recorder<Int>()
        var timers: [OneShotTimer] = []
        for i in 0..<3_000 {
            // Three deadlines interleaved: 1 ms, 2 ms, 3 ms; later ones with leeway.
            let slot = Int64(i % 3 + 1)
            timers.append(scheduler.schedule(at: t0 + .milliseconds(slot),
                                                 leeway: slot == 1 ? .zero : .milliseconds(10)) { _ in
                order.append(i)
            })
        }
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(order.all, Array(stride(from: 0, to: 3_000, by: 3)))
        XCTAssertEqual(scheduler.statistics.liveTimers, 2_000)
        timers[1].cancel()  // still queued in both heaps after the bulk removal
        clock.advance(by: .milliseconds(20))
        let rest = order.all.dropFirst(1_000)
        XCTAssertEqual(Array(rest), stride(from: 1, to: 3_000, by: 3).filter { $0 != 1 } + Array(stride(from: 2, to: 3_000, by: 3)))
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testSuspendResumeCancelAndFireAreDeterministic() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start) { ticks.append($0) }
        clock.advance(to: start)  // tick 0
        timer.suspend()
        timer.suspend()  // idempotent
        XCTAssertTrue(timer.isSuspended)
        clock.advance(to: start + .milliseconds(35))
        XCTAssertEqual(ticks.count, 1, "nothing fires while suspended")
        timer.resume()
        timer.resume()  // idempotent
        clock.advance(by: .zero)
        // The ticks that fell due while suspended are reported as missed, in one fire.
        XCTAssertEqual(ticks.all.map(\.index), [0, 3])
        XCTAssertEqual(ticks.all.last?.missed, 2)
        XCTAssertEqual(ticks.all.last?.firedAt, start + .milliseconds(35))

        timer.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.last?.isManual, true)
        XCTAssertEqual(ticks.all.last?.index, 4, "a manual fire names the next grid tick and does not consume it")
        XCTAssertEqual(timer.nextDeadline, start + .milliseconds(40), "fire() does not move the grid")
        clock.advance(to: start + .milliseconds(40))
        XCTAssertEqual(ticks.all.last?.index, 4)
        XCTAssertEqual(ticks.all.last?.isManual, false)

        timer.cancel()
        timer.cancel()  // idempotent
        XCTAssertTrue(timer.isCancelled)
        XCTAssertNil(timer.nextDeadline)
        let countAtCancel = ticks.count
        timer.resume()  // no-op after cancel
        timer.fire()  // no-op after cancel
        clock.advance(by: .seconds(1))
        XCTAssertEqual(ticks.count, countAtCancel)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFireOnAOneShotIsItsOneFireEvenWhenTheDeadlineFallsDueTogether() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Tick>()
        // fire() before the deadline: it fires now, by hand, and never again.
        let early = scheduler.schedule(after: .milliseconds(10)) { calls.append($0) }
        early.fire()
        early.fire()  // merges with the first request
        clock.advance(by: .zero)
        XCTAssertEqual(calls.all.map(\.isManual), [true])
        XCTAssertTrue(early.hasFired)
        clock.advance(by: .milliseconds(20))
        XCTAssertEqual(calls.count, 1, "the deadline does not fire it a second time")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)

        // fire() requested and the deadline due in the same wake-up: one call, not
        // two, and not none (the stress test found the handler released by the
        // manual call and the scheduled one lost).
        let both = Recorder<Tick>()
        let timer = scheduler.schedule(after: .milliseconds(1)) { both.append($0) }
        timer.fire()
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(both.count, 1)
        XCTAssertTrue(timer.hasFired)
        timer.fire()  // no-op once fired
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(both.count, 1)
    }

    func testCancelInsideTheHandlerStopsFurtherTicks() throws {
        let (scheduler, clock) = makeScheduler()
        let count = Atomic<Int>(0)
        let timer = scheduler.repeating(every: .milliseconds(1)) { tick in
            if count.wrappingAdd(1, ordering: .relaxed).newValue == 3 { tick.cancelTimer() }
        }
        clock.advance(by: .seconds(1))
        XCTAssertEqual(count.load(ordering: .relaxed), 3)
        XCTAssertTrue(timer.isCancelled)
    }

    func testIntervalAndNextDeadlineCanChangeWhileRunning() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start) { ticks.append($0) }
        clock.advance(to: start + .milliseconds(10))  // ticks 0, 1
        timer.setInterval(.milliseconds(3))
        XCTAssertEqual(timer.nextDeadline, start + .milliseconds(20), "the pending tick keeps its deadline")
        clock.advance(to: start + .milliseconds(26))  // ticks at 20, 23, 26
        XCTAssertEqual(ticks.all.map { $0.deadline - start },
                       [.zero, .milliseconds(10), .milliseconds(20), .milliseconds(23), .milliseconds(26)])
        try timer.setNextDeadline(start + .milliseconds(100))
        clock.advance(to: start + .milliseconds(103))
        XCTAssertEqual(ticks.all.suffix(2).map { $0.deadline - start }, [.milliseconds(100), .milliseconds(103)])
        XCTAssertEqual(timer.interval, .milliseconds(3))
    }

    /// A tick whose deadline has come is decided: moved by another timer's
    /// handler of the same wake-up before its own call begins, it still runs,
    /// and the tick after it moves (a one-shot's collected fire is dropped
    /// instead). The same through a registry's `reschedule`.
    func testAMoveAfterATickWasCollectedLetsThatTickRunAndMovesTheNext() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .seconds(1)
        let ran = Recorder<String>()
        let box = Locked<(RepeatingTimer, OneShotTimer)?>(nil)
        let mover = scheduler.schedule(at: start) { _ in
            guard let (repeating, oneShot) = box.withLock({ $0 }) else { return }
            try? repeating.setNextDeadline(start + .seconds(10))
            oneShot.reschedule(at: start + .seconds(10))
        }
        let repeating = try scheduler.repeating(every: .seconds(100), startingAt: start) { tick in
            ran.append("repeating \(tick.index) at \((tick.deadline - start).components.seconds)")
        }
        let oneShot = scheduler.schedule(at: start) { _ in ran.append("one-shot") }
        box.withLock { $0 = (repeating, oneShot) }
        clock.advance(to: start + .seconds(11))
        XCTAssertEqual(ran.all, ["repeating 0 at 0", "repeating 1 at 10", "one-shot"])
        withExtendedLifetime(mover) {}

        let registry = TaskRegistry(scheduler: scheduler)
        let origin = clock.now()
        let runs = Recorder<Duration>()
        registry.schedule("mover", after: .seconds(1)) { _ = registry.reschedule("task", after: .seconds(10)) }
        registry.schedule("task", after: .seconds(1), repeating: .seconds(100)) { runs.append(clock.now() - origin) }
        clock.advance(by: .seconds(12))
        XCTAssertEqual(runs.all, [.seconds(1), .seconds(11)])
        registry.cancelAll()
    }

    func testReleasingTheLastReferenceCancels() throws {
        let (scheduler, clock) = makeScheduler()
        let count = Atomic<Int>(0)
        var timer: RepeatingTimer? = scheduler.repeating(every: .milliseconds(1)) { _ in
            count.add(1, ordering: .relaxed)
        }
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(count.load(ordering: .relaxed), 3)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        timer = nil
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(count.load(ordering: .relaxed), 3)
        // A suspended timer can be released too.
        var suspended: OneShotTimer? = scheduler.schedule(after: .milliseconds(1)) { _ in
            count.add(100, ordering: .relaxed)
        }
        suspended?.suspend()
        suspended = nil
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(count.load(ordering: .relaxed), 3)
        XCTAssertNil(timer)
        XCTAssertNil(suspended)
    }

    func testWeakOwnerDiesWhileItsTimerIsScheduledAndTheTimerStops() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        var owner: Owner? = Owner(flag: flag)
        let ownerTicks = owner!.ticks
        // The timer is held outside the owner, so only the weak reference links them.
        let timer = scheduler.repeating(every: .milliseconds(10), owner: owner!) { owner, tick in
            owner.ticks.append(tick.index)
        }
        clock.advance(by: .milliseconds(20))
        XCTAssertEqual(ownerTicks.all, [0, 1])
        owner = nil
        XCTAssertTrue(flag.isSet, "the owner's deinit ran while its timer was still scheduled")
        XCTAssertFalse(timer.isCancelled)
        clock.advance(by: .milliseconds(10))  // the next tick finds the owner gone
        XCTAssertTrue(timer.isCancelled, "stops within one tick")
        XCTAssertEqual(ownerTicks.all, [0, 1])
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFiredOneShotKeepsItsCapturesForARescheduleAndReleasesThemWithItsHandle() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        var captured: Owner? = Owner(flag: flag)
        var timer: OneShotTimer? = scheduler.schedule(after: .milliseconds(5)) { [captured] _ in
            _ = captured
        }
        captured = nil
        XCTAssertFalse(flag.isSet, "the pending timer holds its capture")
        clock.advance(by: .milliseconds(5))
        XCTAssertTrue(timer!.hasFired)
        XCTAssertFalse(flag.isSet, "a fired one-shot keeps its handler while its handle lives (it can be rescheduled)")
        timer = nil
        XCTAssertTrue(flag.isSet, "released with the handle")
    }

    func testCancellingAFiredOneShotReleasesItsCapturesAndEndsIt() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        var captured: Owner? = Owner(flag: flag)
        let calls = Recorder<Int64>()
        let timer = scheduler.schedule(after: .milliseconds(5)) { [captured] tick in
            _ = captured
            calls.append(tick.deadline.nanoseconds)
        }
        captured = nil
        clock.advance(by: .milliseconds(5))
        timer.cancel()
        XCTAssertTrue(flag.isSet, "cancel lets go of the handler")
        XCTAssertTrue(timer.hasFired, "a fired timer stays fired")
        XCTAssertFalse(timer.isCancelled, "a fired timer is not cancelled")
        timer.reschedule(after: .milliseconds(1))
        clock.advance(by: .seconds(1))
        XCTAssertEqual(calls.count, 1, "after cancel, reschedule does nothing")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testCancelledTimerReleasesItsCaptures() throws {
        let (scheduler, _) = makeScheduler()
        let flag = DeinitFlag()
        var captured: Owner? = Owner(flag: flag)
        let timer = scheduler.repeating(every: .seconds(1)) { [captured] _ in _ = captured }
        captured = nil
        XCTAssertFalse(flag.isSet)
        timer.cancel()
        XCTAssertTrue(flag.isSet)
    }

    func testWallClockTimersFollowTheRealtimeReading() throws {
        let (scheduler, clock) = makeScheduler()
        let wall = clock.now(.realtime)
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(at: wall + .seconds(10), clock: .realtime) { fired.append($0) }
        clock.advance(by: .seconds(5))
        XCTAssertEqual(fired.count, 0)
        clock.setRealtime(wall + .seconds(30))  // the system time was set forward
        clock.advance(by: .zero)
        XCTAssertEqual(fired.count, 1)
        XCTAssertEqual(fired.all.first?.firedAt, wall + .seconds(30))
        withExtendedLifetime(timer) {}
    }

    func testBoottimeTimersKeepTheirOwnGrid() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.boottime) + .milliseconds(7)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(7), startingAt: start, clock: .boottime) {
            ticks.append($0)
        }
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(ticks.all.map { $0.deadline - start }, [.zero, .milliseconds(7), .milliseconds(14),
                                                              .milliseconds(21)])
        XCTAssertEqual(ticks.all.map(\.firedAt), ticks.all.map(\.deadline))
        withExtendedLifetime(timer) {}
    }

    func testHandlersMayScheduleAndCancelOtherTimers() throws {
        let (scheduler, clock) = makeScheduler()
        let log = Recorder<String>()
        let holder = Locked<[OneShotTimer]>([])
        let victim = scheduler.schedule(after: .milliseconds(20)) { _ in log.append("victim") }
        let first = scheduler.schedule(after: .milliseconds(10)) { _ in
            log.append("first")
            victim.cancel()
            let child = scheduler.schedule(after: .milliseconds(1)) { _ in log.append("child") }
            holder.withLock { $0.append(child) }
        }
        clock.advance(by: .milliseconds(50))
        XCTAssertEqual(log.all, ["first", "child"])
        withExtendedLifetime(first) {}
    }

    /// `Tick.setNextDeadline` on a tick kept past its handler still anchors
    /// the tick after it: the pending tick lands as many intervals after the
    /// deadline as it is past that tick (as the doc says), never before now.
    func testSetNextDeadlineOnAKeptTickAnchorsTheTickAfterIt() throws {
        let (scheduler, clock) = makeScheduler()
        let kept = Recorder<Tick>()
        let start = clock.now + .milliseconds(1)
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { tick in
            if tick.index == 0 { kept.append(tick) }
        }
        clock.advance(by: .milliseconds(100))  // ticks 0 … 99 fired; tick 100 pending
        XCTAssertEqual(timer.nextDeadline, start + .milliseconds(100))
        let tick0 = try XCTUnwrap(kept.all.first)
        let deadline = clock.now + .milliseconds(10)
        try tick0.setNextDeadline(deadline)  // tick 1 at `deadline`: tick 100 is 99 intervals later
        XCTAssertEqual(timer.nextDeadline, deadline + .milliseconds(99))
        try timer.setNextDeadline(deadline)  // the timer's own call moves the pending tick itself
        XCTAssertEqual(timer.nextDeadline, deadline)
    }
}
