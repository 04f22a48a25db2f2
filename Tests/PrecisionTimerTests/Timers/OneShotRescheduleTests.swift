@testable import PrecisionTimer
import Dispatch
import Synchronization
import XCTest

/// `OneShotTimer.reschedule(at:)` / `reschedule(after:)`: the deadline moves in
/// place (same handle, same node) from every state, and `hasFired`, `isCancelled`
/// and the engine's counts stay true at each step. Virtual time: exact deadlines.
final class OneShotRescheduleTests: XCTestCase {
    func testAPendingOneShotMovesToItsNewDeadlineExactly() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(10)) { fired.append($0) }
        let node = ObjectIdentifier(timer.node)
        timer.reschedule(after: .seconds(20))
        XCTAssertEqual(timer.deadline, start + .seconds(20))
        XCTAssertEqual(ObjectIdentifier(timer.node), node, "the same node")
        clock.advance(by: .seconds(15))
        XCTAssertEqual(fired.count, 0, "not at the old deadline")
        XCTAssertFalse(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        clock.advance(by: .seconds(5) - .nanoseconds(1))
        XCTAssertEqual(fired.count, 0, "never early")
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.all.map(\.deadline), [start + .seconds(20)])
        XCTAssertEqual(fired.all.map(\.firedAt), [start + .seconds(20)])
        XCTAssertTrue(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testAnEarlierDeadlineFiresEarlierAndAPastOneAtOnce() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(10)) { fired.append($0) }
        timer.reschedule(at: start + .seconds(2))
        clock.advance(by: .seconds(2))
        XCTAssertEqual(fired.all.map(\.firedAt), [start + .seconds(2)])
        timer.reschedule(at: start - .seconds(100))
        XCTAssertFalse(timer.hasFired, "armed again")
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.count, 2, "a past deadline fires at the next wake-up")
    }

    func testAFiredOneShotFiresAgainAndTheCountsFollow() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(1)) { fired.append($0) }
        clock.advance(by: .seconds(1))
        XCTAssertTrue(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        for round in 1...3 {
            timer.reschedule(after: .seconds(1))
            XCTAssertFalse(timer.hasFired)
            XCTAssertFalse(timer.isCancelled)
            XCTAssertEqual(scheduler.statistics.liveTimers, 1)
            clock.advance(by: .seconds(1))
            XCTAssertTrue(timer.hasFired)
            XCTAssertEqual(scheduler.statistics.liveTimers, 0)
            XCTAssertEqual(fired.count, round + 1)
        }
        XCTAssertEqual(fired.all.map(\.deadline), (1...4).map { start + .seconds($0) })
        XCTAssertEqual(scheduler.statistics.fires, 4)
    }

    func testASuspendedOneShotKeepsItsNewDeadlineForItsResume() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(1)) { fired.append($0) }
        timer.suspend()
        timer.reschedule(at: start + .seconds(5))
        XCTAssertTrue(timer.isSuspended, "still suspended")
        XCTAssertEqual(timer.deadline, start + .seconds(5))
        clock.advance(by: .seconds(3))
        timer.resume()
        clock.advance(by: .seconds(2) - .nanoseconds(1))
        XCTAssertEqual(fired.count, 0)
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.all.map(\.deadline), [start + .seconds(5)])
        // Suspended after firing: the new deadline waits for the resume, too.
        timer.reschedule(after: .seconds(1))
        timer.suspend()
        clock.advance(by: .seconds(2))
        XCTAssertEqual(fired.count, 1)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1, "a suspended timer is live")
        timer.resume()
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.count, 2, "its passed deadline fires at the resume")
    }

    /// A fire collected but not yet called (waiting on its delivery queue) is
    /// neither `hasFired` nor off the live count; a reschedule drops it.
    func testACollectedFireIsNotFiredUntilItsCallBeginsAndARescheduleDropsIt() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let queue = DispatchQueue(label: "held")
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(1), delivery: .queue(queue)) { fired.append($0) }
        queue.suspend()
        clock.advance(by: .seconds(1))
        XCTAssertFalse(timer.hasFired, "collected, its call not begun")
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        timer.reschedule(at: start + .seconds(3))
        queue.resume()
        queue.sync {}
        XCTAssertEqual(fired.count, 0, "the collected fire was dropped")
        XCTAssertFalse(timer.hasFired)
        clock.advance(by: .seconds(2))
        queue.sync {}
        XCTAssertEqual(fired.all.map(\.deadline), [start + .seconds(3)])
        XCTAssertTrue(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// A `fire()` asked for and not yet run is dropped by a reschedule, as a
    /// collected fire is: the one-shot fires once, at its new deadline, never
    /// by hand and then never again (the new deadline silently lost). On a
    /// virtual scheduler the request waits for the next advance, so the
    /// reschedule always comes before it is collected.
    func testARescheduleAfterFireDropsTheRequestedFireAndKeepsTheNewDeadline() {
        for suspended in [false, true] {
            let (scheduler, clock) = makeScheduler()
            let start = clock.now(.monotonic)
            let fired = Recorder<Tick>()
            let timer = scheduler.schedule(after: .seconds(10)) { fired.append($0) }
            if suspended { timer.suspend() }
            timer.fire()
            timer.reschedule(at: start + .seconds(3))
            clock.advance(by: .seconds(1))
            XCTAssertEqual(fired.count, 0, "suspended \(suspended): the requested fire was dropped")
            XCTAssertFalse(timer.hasFired)
            XCTAssertEqual(scheduler.statistics.liveTimers, 1, "suspended \(suspended): still live")
            if suspended {
                clock.advance(by: .seconds(5))
                XCTAssertEqual(fired.count, 0, "a suspended one-shot keeps its new deadline for its resume")
                timer.resume()
            }
            clock.advance(by: .seconds(5))
            XCTAssertEqual(fired.all.map(\.isManual), [false], "suspended \(suspended)")
            XCTAssertEqual(fired.all.map(\.deadline), [start + .seconds(3)], "suspended \(suspended)")
            XCTAssertTrue(timer.hasFired)
            XCTAssertEqual(scheduler.statistics.liveTimers, 0)
            // A fire() after the reschedule still fires now, instead.
            timer.reschedule(at: clock.now(.monotonic) + .seconds(10))
            timer.fire()
            clock.advance(by: .seconds(1))
            XCTAssertEqual(fired.all.map(\.isManual), [false, true], "suspended \(suspended)")
            clock.advance(by: .seconds(20))
            XCTAssertEqual(fired.count, 2, "suspended \(suspended): a fired one-shot is done")
        }
    }

    /// A suspended one-shot asked to `fire()`, whose fire has been collected
    /// (it waits on its held delivery queue) but not begun, is still
    /// suspended: a reschedule drops the fire and leaves it suspended with the
    /// new deadline, as when the fire had not been collected yet; a resume
    /// lets the fire run, and the one-shot is then done.
    func testAFireAskedForWhileSuspendedStaysSuspendedUntilItsCallBegins() {
        for resumes in [false, true] {
            let (scheduler, clock) = makeScheduler()
            let start = clock.now(.monotonic)
            let queue = DispatchQueue(label: "held")
            let fired = Recorder<Tick>()
            let timer = scheduler.schedule(after: .seconds(10), delivery: .queue(queue)) { fired.append($0) }
            timer.suspend()
            timer.fire()
            queue.suspend()
            clock.advance(by: .seconds(1))  // the fire is collected onto the held queue
            XCTAssertTrue(timer.isSuspended, "resumes \(resumes): suspended until the fire's call begins")
            XCTAssertFalse(timer.hasFired)
            if resumes {
                timer.resume()
                XCTAssertFalse(timer.isSuspended)
                queue.resume()
                queue.sync {}
                XCTAssertEqual(fired.all.map(\.isManual), [true])
                XCTAssertTrue(timer.hasFired)
                XCTAssertEqual(scheduler.statistics.liveTimers, 0)
                clock.advance(by: .seconds(20))
                queue.sync {}
                XCTAssertEqual(fired.count, 1, "a one-shot fired by hand is done")
                continue
            }
            timer.reschedule(at: start + .seconds(3))
            queue.resume()
            queue.sync {}
            XCTAssertEqual(fired.count, 0, "the fire was dropped")
            XCTAssertTrue(timer.isSuspended, "suspended again, with the new deadline")
            XCTAssertEqual(timer.deadline, start + .seconds(3))
            clock.advance(by: .seconds(5))
            queue.sync {}
            XCTAssertEqual(fired.count, 0, "no call without a resume")
            XCTAssertEqual(scheduler.statistics.liveTimers, 1)
            timer.resume()
            clock.advance(by: .nanoseconds(1))
            queue.sync {}
            XCTAssertEqual(fired.all.map(\.isManual), [false])
            XCTAssertEqual(fired.all.map(\.deadline), [start + .seconds(3)])
            XCTAssertTrue(timer.hasFired)
        }
    }

    /// The same, with another tick of the timer handled on the delivery queue
    /// while the fire waits behind it: a stale deadline tick dropped there
    /// (`stale`), or the timer's own call that asked for the fire ending
    /// there. Neither makes the timer forget it is suspended.
    func testAnotherTickOfTheTimerEndingDoesNotUnsuspendAFireAskedForWhileSuspended() throws {
        for stale in [true, false] {
            let (scheduler, clock) = makeScheduler()
            let queue = DispatchQueue(label: "gated")
            let fired = Recorder<Tick>()
            let (first, inGate, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0),
                                         DispatchSemaphore(value: 0))
            let inHandler = DispatchSemaphore(value: 0)
            let slot = Locked<OneShotTimer?>(nil)
            let timer = scheduler.schedule(after: .seconds(1), delivery: .queue(queue)) { tick in
                fired.append(tick)
                guard !stale, fired.count == 1, let timer = slot.withLock({ $0 }) else { return }
                // Its own call: armed again, suspended, asked to fire, and the
                // fire held behind the gate.
                timer.reschedule(after: .seconds(10))
                timer.suspend()
                queue.async { inGate.signal(); gate.wait() }
                timer.fire()
                inHandler.signal()
                first.wait()
            }
            slot.withLock { $0 = timer }
            if stale {
                queue.async { first.wait() }
                clock.advance(by: .seconds(1))  // the deadline tick waits behind `first`
                timer.suspend()                 // …and is now stale
                queue.async { inGate.signal(); gate.wait() }
                timer.fire()
                clock.advance(by: .nanoseconds(1))  // the fire waits behind the gate
            } else {
                clock.advance(by: .seconds(1))
                inHandler.wait()
                clock.advance(by: .nanoseconds(1))  // the fire waits behind the gate
            }
            first.signal()
            inGate.wait()  // the other tick is done with
            XCTAssertTrue(timer.isSuspended, "stale \(stale): suspended until the fire's call begins")
            let moved = clock.now(.monotonic) + .seconds(3)
            timer.reschedule(at: moved)
            gate.signal()
            queue.sync {}
            clock.advance(by: .seconds(5))
            queue.sync {}
            XCTAssertEqual(fired.count, stale ? 0 : 1, "stale \(stale): no call until the resume")
            XCTAssertTrue(timer.isSuspended, "stale \(stale)")
            timer.resume()
            clock.advance(by: .nanoseconds(1))
            queue.sync {}
            XCTAssertEqual(fired.all.map(\.isManual).last, false, "stale \(stale): fires after its resume")
            XCTAssertEqual(fired.count, stale ? 1 : 2, "stale \(stale)")
            XCTAssertEqual(try XCTUnwrap(fired.all.last).deadline, moved, "stale \(stale)")
            slot.withLock { $0 = nil }
        }
    }

    /// `fire()` asked for after a suspend, then a second `suspend()` before
    /// the fire has run: the fire is dropped whether or not it was collected.
    func testASecondSuspendDropsAFireAskedForSinceTheFirst() {
        for collected in [false, true] {
            let (scheduler, clock) = makeScheduler()
            let queue = DispatchQueue(label: "held")
            let fired = Recorder<Tick>()
            let timer = scheduler.schedule(after: .seconds(10), delivery: .queue(queue)) { fired.append($0) }
            timer.suspend()
            timer.fire()
            queue.suspend()
            if collected { clock.advance(by: .seconds(1)) }
            timer.suspend()
            queue.resume()
            clock.advance(by: .seconds(1))
            queue.sync {}
            XCTAssertEqual(fired.count, 0, "collected \(collected): the fire was dropped")
            XCTAssertTrue(timer.isSuspended)
            XCTAssertFalse(timer.hasFired)
            XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        }
    }

    func testAHandlerThatReschedulesItsOwnTimerRunsOnItsOwnSchedule() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let slot = Locked<OneShotTimer?>(nil)
        let timer = scheduler.schedule(after: .seconds(1)) { tick in
            fired.append(tick)
            if fired.count < 4 { slot.withLock { $0 }?.reschedule(at: tick.deadline + .seconds(2)) }
        }
        slot.withLock { $0 = timer }
        clock.advance(by: .seconds(10))
        XCTAssertEqual(fired.all.map(\.deadline), [1, 3, 5, 7].map { start + .seconds($0) })
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        slot.withLock { $0 = nil }
    }

    func testRescheduleAfterCancelOrOnAReleasedTimerDoesNothing() {
        let (scheduler, clock) = makeScheduler()
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(1)) { fired.append($0) }
        timer.cancel()
        timer.reschedule(after: .seconds(1))
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        clock.advance(by: .seconds(5))
        XCTAssertEqual(fired.count, 0)
    }

    /// Once its scheduler is released, the scheduler's thread ends when no
    /// timer is live: a fired one-shot is not armed again (it would never
    /// fire, and read as pending forever); a pending one still moves.
    func testAFiredOneShotOfAReleasedSchedulerStaysFired() throws {
        let clock = VirtualClock()
        var scheduler: TimerScheduler? = TimerScheduler(clock: clock)
        let fired = Recorder<Tick>()
        let timer = scheduler!.schedule(after: .seconds(1)) { fired.append($0) }
        let pending = scheduler!.schedule(after: .seconds(5)) { fired.append($0) }
        clock.advance(by: .seconds(1))
        scheduler = nil
        timer.reschedule(after: .seconds(1))
        XCTAssertTrue(timer.hasFired, "stays fired")
        XCTAssertFalse(timer.isCancelled)
        pending.reschedule(after: .seconds(2))
        clock.advance(by: .seconds(2))
        XCTAssertEqual(fired.count, 2, "the pending one moved and fired; the fired one did not come back")
        XCTAssertEqual(fired.all.last?.deadline, pending.deadline)

        // On a real scheduler, whose thread has ended or is about to.
        let calls = Recorder<Tick>()
        var real: TimerScheduler? = try TimerScheduler()
        let oneShot = real!.schedule(after: .milliseconds(1)) { calls.append($0) }
        real = nil
        XCTAssertTrue(waitUntil { oneShot.hasFired })
        oneShot.reschedule(after: .milliseconds(1))
        XCTAssertTrue(oneShot.hasFired, "not armed again: it would never fire")
        usleep(20_000)
        XCTAssertEqual(calls.count, 1)
    }

    func testNeverAndRescheduleBackFromNever() {
        let (scheduler, clock) = makeScheduler()
        let fired = Recorder<Tick>()
        let timer = scheduler.schedule(after: .seconds(1)) { fired.append($0) }
        timer.reschedule(at: .max)
        clock.advance(by: .seconds(1_000_000))
        XCTAssertEqual(fired.count, 0)
        timer.reschedule(after: .seconds(-5))
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.count, 1)
    }

    /// Re-arming allocates no node: the count of live nodes (a debug counter)
    /// does not move over many re-arms.
    func testReschedulingMakesNoNewNode() throws {
        #if DEBUG
        let (scheduler, clock) = makeScheduler()
        let timer = scheduler.schedule(after: .seconds(1)) { _ in }
        let before = TimerNode.instances.load(ordering: .relaxed)
        for k in 0..<1_000 { timer.reschedule(after: .seconds(Int64(k % 7))) }
        clock.advance(by: .seconds(10))
        timer.reschedule(after: .seconds(1))
        XCTAssertEqual(TimerNode.instances.load(ordering: .relaxed), before)
        #else
        throw XCTSkip("the node counter exists in debug builds only")
        #endif
    }

    /// On a real scheduler, `hasFired` and the live count never run ahead of
    /// the handler call: the spin toward a zero-leeway deadline collects the
    /// one-shot before the deadline, but it has not fired until its call.
    func testHasFiredIsNeverTrueBeforeTheDeadlineOnARealScheduler() throws {
        let scheduler = try TimerScheduler()
        let clock = PrecisionClock.monotonic
        for _ in 0..<20 {
            let called = Atomic<Bool>(false)
            let deadline = clock.now + .milliseconds(3)
            let timer = scheduler.schedule(at: deadline) { _ in called.store(true, ordering: .releasing) }
            var early: Duration?
            while !called.load(ordering: .acquiring) {
                let fired = timer.hasFired
                let live = scheduler.statistics.liveTimers
                let now = clock.now
                if now < deadline && (fired || live != 1) {
                    early = now.duration(to: deadline)
                    break
                }
                if now > deadline + .seconds(5) { break }
            }
            XCTAssertNil(early, "hasFired or liveTimers changed \(early.map { "\($0)" } ?? "") before the deadline")
            XCTAssertTrue(called.load(ordering: .acquiring), "the one-shot fired")
            withExtendedLifetime(timer) {}
        }
    }
}

extension OneShotRescheduleTests {
    /// The same race on a real scheduler, whose thread collects the requested
    /// fire at any moment: `fire()`, then at once `reschedule(after:)`. The
    /// fire by hand runs only if its call began before the reschedule; either
    /// way the one-shot fires once at its new deadline, never before it.
    func testFireThenRescheduleOnARealSchedulerNeverLosesTheNewDeadline() throws {
        let scheduler = try TimerScheduler()
        let clock = PrecisionClock.monotonic
        var byHand = 0
        for round in 0..<200 {
            let calls = Recorder<Tick>()
            let due = DispatchSemaphore(value: 0)
            let timer = scheduler.schedule(after: .seconds(10)) { tick in
                calls.append(tick)
                if !tick.isManual { due.signal() }
            }
            timer.fire()
            let asked = clock.now
            timer.reschedule(after: .milliseconds(1))
            guard due.wait(timeout: .now() + 2) == .success else {
                XCTFail("round \(round): the new deadline never fired (calls: \(calls.all.map(\.isManual)))")
                timer.cancel()
                break
            }
            timer.cancel()  // synchronous: no call runs after it
            let all = calls.all
            byHand += all.filter(\.isManual).count
            XCTAssertEqual(all.filter { !$0.isManual }.count, 1, "round \(round)")
            XCTAssertTrue(all.last.map { !$0.isManual } ?? false, "round \(round): the fire by hand ran first, if at all")
            XCTAssertLessThanOrEqual(all.count, 2, "round \(round)")
            if let tick = all.last {
                XCTAssertGreaterThanOrEqual(tick.firedAt, tick.deadline, "round \(round): never early")
                XCTAssertGreaterThanOrEqual(tick.deadline, asked + .milliseconds(1), "round \(round)")
            }
        }
        print("fire() then reschedule: the fire by hand ran in \(byHand) of 200 rounds")
    }

    /// Two one-shots due at one instant are collected in one batch; the first's
    /// handler reschedules the second before its call: the second's collected
    /// fire is dropped, and it fires at its new deadline only.
    func testARescheduleFromAnotherHandlerInTheSameBatchDropsTheCollectedFire() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let second = Recorder<Tick>()
        let slot = Locked<OneShotTimer?>(nil)
        let first = scheduler.schedule(at: start + .seconds(1)) { _ in
            slot.withLock { $0 }?.reschedule(at: start + .seconds(3))
        }
        let other = scheduler.schedule(at: start + .seconds(1)) { second.append($0) }
        slot.withLock { $0 = other }
        clock.advance(by: .seconds(1))
        XCTAssertEqual(second.count, 0, "the collected fire was dropped")
        XCTAssertFalse(other.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        clock.advance(by: .seconds(2))
        XCTAssertEqual(second.all.map(\.deadline), [start + .seconds(3)])
        slot.withLock { $0 = nil }
        withExtendedLifetime(first) {}
    }
}
