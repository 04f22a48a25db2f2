import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// The engine on its real thread. Timing bounds here are generous on purpose:
/// these machines are shared 2-core VMs. Exact things (never early, counts,
/// ordering, exact grid deadlines) are asserted exactly.
final class RealThreadEngineTests: XCTestCase {
    func testRepeatingTimerOnItsOwnThreadIsNeverEarlyAndStaysOnTheGrid() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-grid"))
        let clock = PrecisionClock()
        let start = clock.now + .milliseconds(5)
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { tick in
            ticks.append(tick)
            if tick.index >= 199 { tick.cancelTimer() }
        }
        XCTAssertTrue(waitUntil { timer.isCancelled })
        assertSkipTicksOnGrid(ticks.all, start: start, interval: .milliseconds(1))
        // The first tick at or past 199 cancels (a stall may skip 199 itself).
        let indices = ticks.all.map(\.index)
        XCTAssertGreaterThanOrEqual(indices.last ?? -1, 199)
        XCTAssertTrue(indices.dropLast().allSatisfy { $0 < 199 }, "a tick after the cancelling one")
    }

    /// Thousands of one-shots due at one instant inside the wheel's lookahead
    /// wait in the run (zero leeway) or the heaps (with leeway); the thread
    /// takes them a collection at a time, the rest waiting at the head of the
    /// run meanwhile. The first handler cancels the last 500 and pushes one
    /// back: none of those fires at the instant, every other fires once,
    /// never early, in the order scheduled.
    func testAManyTimerInstantInTheRunFiresInOrderAndHonoursCancelsMadeMeanwhile() throws {
        try manyTimerInstant(leeway: .zero, waitsInTheHeaps: false)
    }

    func testAManyTimerInstantInTheHeapsFiresInOrderAndHonoursCancelsMadeMeanwhile() throws {
        try manyTimerInstant(leeway: .nanoseconds(1), waitsInTheHeaps: true)
    }

    private func manyTimerInstant(leeway: Duration, waitsInTheHeaps: Bool) throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-bulk"))
        // A gate holds the scheduler's thread in a handler while the batch is
        // made, however long that takes (a sanitizer build is slow). Its
        // collection moved the wheel's frontier a lookahead past then, so the
        // batch, due sooner than that, goes to the heaps.
        let entered = DispatchSemaphore(value: 0)
        let open = DispatchSemaphore(value: 0)
        let gate = scheduler.schedule(after: .zero) { _ in
            entered.signal()
            open.wait()
        }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success)
        let count = 4_000
        let deadline = PrecisionClock.monotonic.now + .milliseconds(10)
        let pushedBack = 3_000
        let timers = LockedValue<[OneShotTimer]>([])
        let fired = Recorder<(index: Int, tick: Tick)>()
        let lastAtFirstCall = Recorder<String>()
        for i in 0..<count {
            let timer = scheduler.schedule(at: deadline, leeway: leeway) { tick in
                fired.append((i, tick))
                guard i == 0 else { return }
                let all = timers.withLock { $0 }
                // The thread collects at most `collectionLimit` before it calls.
                lastAtFirstCall.append("\(all[count - 1].node.read { $0.state })")
                for t in all[3_500...] { t.cancel() }
                all[pushedBack].reschedule(at: deadline + .milliseconds(5))
            }
            timers.withLock { $0.append(timer) }
        }
        let (inHeaps, inRun) = scheduler.engine.state.withLock { s in
            let queue = s.queues[PrecisionClock.Source.monotonic.rawValue]
            return (queue.byDeadline.count, queue.run.count)
        }
        open.signal()
        if waitsInTheHeaps {
            XCTAssertEqual(inHeaps, count, "the batch with leeway waits in the heaps")
        } else {
            XCTAssertEqual(inRun, count, "the zero-leeway batch waits in the run")
        }
        XCTAssertTrue(waitUntil { fired.count == 3_500 }, "\(fired.count) fired")
        let calls = fired.all
        XCTAssertEqual(calls.map(\.index), Array(0..<pushedBack) + Array((pushedBack + 1)..<3_500) + [pushedBack],
                       "in the order scheduled; the pushed-back one last; the cancelled ones never")
        for call in calls {
            let due = call.index == pushedBack ? deadline + .milliseconds(5) : deadline
            XCTAssertEqual(call.tick.deadline, due)
            XCTAssertGreaterThanOrEqual(call.tick.firedAt, due, "never early (timer \(call.index))")
        }
        XCTAssertTrue(timers.withLock { $0 }[3_500...].allSatisfy(\.isCancelled))
        XCTAssertEqual(lastAtFirstCall.all, ["scheduled"],
                       "the first handler ran before the whole batch was collected: the last still waited")
        withExtendedLifetime(gate) {}
        // The handlers capture `timers`, and a fired one-shot keeps its handler
        // while its handle lives: releasing the handles breaks that cycle
        // (else LeakSanitizer finds the test's timers, nodes and scheduler).
        let handles = timers.withLock { Swift.exchange(&$0, with: []) }
        withExtendedLifetime(handles) {}
    }

    /// The ticks prepared ahead of a spin and those collected at its end
    /// merge in deadline order, the prepared first on equal deadlines: those
    /// collected later were queued later.
    func testTicksCollectedAtTheSpinsEndFollowThePreparedOnesOfTheirInstant() {
        let prepared = [(100, "a0"), (100, "a1"), (100, "a2")]
        let later = [(90, "x"), (100, "b0"), (100, "b1"), (110, "y")]
        let merged = TimerEngine.inDeadlineOrder(prepared: prepared, collectedAfter: later) { Int64($0.0) }
        XCTAssertEqual(merged.map(\.1), ["x", "a0", "a1", "a2", "b0", "b1", "y"])
    }

    /// A timer collected during a spin is called at once only when it is due
    /// before every prepared tick of its clock (here the earliest prepared is
    /// at 90 ns, and at 5,000 ns on the wall clock). A fire by hand never
    /// waits.
    func testATimerCollectedDuringASpinWaitsUnlessDueBeforeEveryPreparedTick() {
        var preparedFrom = [Int64](repeating: .max, count: PrecisionClock.Source.allCases.count)
        preparedFrom[PrecisionClock.Source.monotonic.rawValue] = 90
        preparedFrom[PrecisionClock.Source.realtime.rawValue] = 5_000
        func waits(_ deadline: Int64, _ source: PrecisionClock.Source = .monotonic, manual: Bool = false) -> Bool {
            TimerEngine.waitsForPrepared(deadline: deadline, of: source, isManual: manual, preparedFrom: preparedFrom)
        }
        XCTAssertFalse(waits(80), "due before every prepared tick")
        XCTAssertTrue(waits(90), "at the earliest prepared instant")
        XCTAssertTrue(waits(95), "between prepared instants")
        XCTAssertTrue(waits(120), "past every prepared instant")
        XCTAssertTrue(waits(5_000, .realtime), "at its clock's earliest prepared instant")
        XCTAssertFalse(waits(4_000, .realtime), "before its clock's")
        XCTAssertFalse(waits(120, .boottime), "nothing prepared on its clock")
        XCTAssertFalse(waits(100, manual: true), "a fire by hand")
    }

    /// A repeating timer made during a spin, its grid starting at the instant
    /// of a prepared tick with leeway (L, 2 ms before the spin's deadline Z):
    /// its first tick waits for the spin's end, after L, and the ticks
    /// collected after it must not overtake it. Its calls come in index
    /// order, none early.
    func testARepeatingTimerStartedDuringASpinKeepsItsTicksInOrder() throws {
        let scheduler = try spinningScheduler(name: "test-spin-grid", spinsLast: .milliseconds(5))
        let clock = PrecisionClock.monotonic
        for round in 0..<5 {
            let calls = Recorder<(name: String, index: Int, tick: Tick)>()
            let deadline = clock.now + .milliseconds(20)
            let start = deadline - .milliseconds(2)
            let l = scheduler.schedule(at: start, leeway: .milliseconds(3)) { calls.append(("L", 0, $0)) }
            let z = scheduler.schedule(at: deadline, leeway: .zero) { calls.append(("Z", 0, $0)) }
            let grid = LockedValue<RepeatingTimer?>(nil)
            let made = DispatchSemaphore(value: 0)
            Thread {
                while clock.now < deadline - .milliseconds(3) {}
                let timer = try? scheduler.repeating(every: .microseconds(100), startingAt: start, policy: .burst) { tick in
                    calls.append(("R", Int(tick.index), tick))
                    if tick.index >= 30 { tick.cancelTimer() }
                }
                grid.withLock { $0 = timer }
                made.signal()
            }.start()
            XCTAssertEqual(made.wait(timeout: .now() + 10), .success, "round \(round)")
            XCTAssertTrue(waitUntil { grid.withLock { $0?.isCancelled ?? false } }, "round \(round): the grid ended")
            XCTAssertTrue(waitUntil { z.hasFired && l.hasFired }, "round \(round)")
            let all = calls.all
            let indices = all.filter { $0.name == "R" }.map(\.index)
            XCTAssertEqual(indices, Array(0...30), "round \(round): the grid's calls out of order")
            if let first = all.firstIndex(where: { $0.name == "R" }), let lAt = all.firstIndex(where: { $0.name == "L" }) {
                XCTAssertLessThan(lAt, first, "round \(round): L, scheduled first at the grid's first instant, fires first")
            }
            for call in all {
                XCTAssertGreaterThanOrEqual(call.tick.firedAt, call.tick.deadline, "round \(round): \(call.name) early")
            }
            if indices != Array(0...30) { break }
        }
    }

    /// Same-instant order across the spin: the thread prepares the first
    /// collection of a 2,000-timer instant and spins its last 5 ms to it,
    /// while another thread keeps ringing its doorbell (timers due at once)
    /// and scheduling more timers at that instant from 3 ms before it. Every
    /// call follows the scheduling order: the batch in its order, then the
    /// other thread's timers in theirs, none early.
    func testAnInstantPreparedAheadOfASpinKeepsItsOrderWhenTheDoorbellRings() throws {
        let scheduler = try spinningScheduler(name: "test-spin-order", spinsLast: .milliseconds(5))
        let clock = PrecisionClock.monotonic
        let batch = 2_000
        for round in 0..<10 {
            let calls = Recorder<Int>()  // the batch: 0 ..< batch; the other thread's: batch + k
            let early = Recorder<Int>()  // calls before their deadline
            let deadline = clock.now + .milliseconds(20)
            var timers: [OneShotTimer] = []
            for i in 0..<batch {
                timers.append(scheduler.schedule(at: deadline, leeway: .zero) { tick in
                    if tick.firedAt < tick.deadline || clock.now < deadline { early.append(i) }
                    calls.append(i)
                })
            }
            let others = LockedValue<[OneShotTimer]>([])
            let ended = DispatchSemaphore(value: 0)
            let ringer = Thread {
                var mine: [OneShotTimer] = []
                while clock.now < deadline - .milliseconds(3) {}
                var k = 0
                while clock.now < deadline + .milliseconds(1) && k < 5_000 {
                    let index = batch + k
                    mine.append(scheduler.schedule(at: deadline, leeway: .zero) { tick in
                        if tick.firedAt < tick.deadline || clock.now < deadline { early.append(index) }
                        calls.append(index)
                    })
                    mine.append(scheduler.schedule(after: .zero) { _ in })  // due at once: rings the doorbell
                    k += 1
                }
                others.withLock { $0 = mine }
                ended.signal()
            }
            ringer.start()
            XCTAssertEqual(ended.wait(timeout: .now() + 10), .success, "round \(round): the other thread ended")
            let expected = batch + others.withLock { $0.count } / 2
            XCTAssertTrue(waitUntil { calls.count == expected }, "round \(round): \(calls.count) of \(expected) fired")
            let order = calls.all
            let wrong = zip(order, 0..<expected).first { $0.0 != $0.1 }
            XCTAssertNil(wrong, "round \(round): call \(wrong?.1 ?? 0) was timer \(wrong?.0 ?? 0), out of scheduling order "
                         + "(the batch is 0 ..< \(batch), the other thread's from \(batch) on): \(Self.runs(order))")
            XCTAssertEqual(early.all, [], "round \(round): calls before their deadline")
            withExtendedLifetime(timers) {}
            if wrong != nil { break }
        }
    }

    /// `values` as runs of consecutive integers ("0...1023, 1024...1999").
    static func runs(_ values: [Int]) -> String {
        var runs: [String] = []
        var start = 0
        for i in values.indices where i == values.count - 1 || values[i + 1] != values[i] + 1 {
            runs.append(start == i ? "\(values[i])" : "\(values[start])...\(values[i])")
            start = i + 1
        }
        return runs.joined(separator: ", ")
    }

    func testCancelFromAnotherThreadWaitsForTheRunningHandler() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-cancel"))
        let inHandler = Atomic<Bool>(false)
        let finished = Atomic<Int>(0)
        let started = Atomic<Int>(0)
        let timer = scheduler.repeating(every: .milliseconds(1)) { _ in
            started.add(1, ordering: .relaxed)
            inHandler.store(true, ordering: .releasing)
            usleep(50_000)
            finished.add(1, ordering: .relaxed)
            inHandler.store(false, ordering: .releasing)
        }
        XCTAssertTrue(waitUntil { inHandler.load(ordering: .acquiring) })
        timer.cancel()
        // When cancel() returns the handler is not running and will not run again.
        XCTAssertFalse(inHandler.load(ordering: .acquiring))
        let startedAtCancel = started.load(ordering: .relaxed)
        XCTAssertEqual(finished.load(ordering: .relaxed), startedAtCancel)
        usleep(30_000)
        XCTAssertEqual(started.load(ordering: .relaxed), startedAtCancel)
    }

    func testCancelOfAQueueDeliveredTimerWaitsForTheHandlerOnTheQueue() throws {
        let queue = DispatchQueue(label: "test.delivery")
        let inHandler = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let timer = TimerScheduler.shared.repeating(every: .milliseconds(2), delivery: .queue(queue)) { _ in
            calls.add(1, ordering: .relaxed)
            inHandler.store(true, ordering: .releasing)
            usleep(20_000)
            inHandler.store(false, ordering: .releasing)
        }
        XCTAssertTrue(waitUntil { inHandler.load(ordering: .acquiring) })
        timer.cancel()
        XCTAssertFalse(inHandler.load(ordering: .acquiring))
        let atCancel = calls.load(ordering: .relaxed)
        queue.sync {}  // drain fires queued before the cancel: they must be skipped
        usleep(20_000)
        XCTAssertEqual(calls.load(ordering: .relaxed), atCancel)
    }

    func testATimerAddedFromAnotherThreadWakesTheSchedulerPromptly() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-wake"))
        // The thread is asleep waiting for a timer an hour away.
        let far = scheduler.schedule(after: .seconds(3600)) { _ in }
        usleep(20_000)
        let clock = PrecisionClock()
        let fired = Recorder<Tick>()
        let deadline = clock.now + .milliseconds(20)
        let near = scheduler.schedule(at: deadline) { fired.append($0) }
        XCTAssertTrue(waitUntil { fired.count == 1 })
        let tick = try XCTUnwrap(fired.all.first)
        XCTAssertGreaterThanOrEqual(tick.firedAt, deadline)
        XCTAssertLessThan(tick.lateness, .seconds(1), "woken by the doorbell, not by the far timer")
        withExtendedLifetime((far, near)) {}
    }

    func testDeliveryOnTheRequestedQueue() throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.queue")
        queue.setSpecific(key: key, value: "mine")
        let seen = Recorder<String?>()
        let timer = TimerScheduler.shared.schedule(after: .milliseconds(2), delivery: .queue(queue)) { _ in
            seen.append(DispatchQueue.getSpecific(key: key))
        }
        XCTAssertTrue(waitUntil { seen.count == 1 })
        XCTAssertEqual(seen.all, ["mine"])
        withExtendedLifetime(timer) {}
    }

    func testLeewayIsNeverEarlyOnTheRealThread() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-leeway"))
        let early = Atomic<Int>(0)
        let fires = Atomic<Int>(0)
        let timers = (0..<50).map { i in
            scheduler.repeating(every: .milliseconds(5 + Int64(i % 7)), leeway: .milliseconds(2)) { tick in
                if tick.firedAt < tick.deadline { early.add(1, ordering: .relaxed) }
                fires.add(1, ordering: .relaxed)
            }
        }
        XCTAssertTrue(waitUntil { fires.load(ordering: .relaxed) > 100 }, "the timers fire")
        timers.forEach { $0.cancel() }
        XCTAssertEqual(early.load(ordering: .relaxed), 0)
    }

    func testATimerOnItsOwnSchedulerIsNotDelayedByABlockedThread() throws {
        // Another scheduler's handler blocks its thread for a second; a timer on a
        // scheduler of its own keeps firing meanwhile.
        let blockStart = Atomic<Int64>(0)
        let blockEnd = Atomic<Int64>(0)
        let clock = PrecisionClock()
        let busy = try TimerScheduler(options: .init(name: "test-busy"))
        let own = try TimerScheduler(options: .init(name: "test-own"))
        let ticks = Recorder<Tick>()
        let timer = own.repeating(every: .milliseconds(10)) { ticks.append($0) }
        let blocker = busy.schedule(after: .milliseconds(50)) { _ in
            blockStart.store(clock.now.nanoseconds, ordering: .releasing)
            usleep(1_000_000)
            blockEnd.store(clock.now.nanoseconds, ordering: .releasing)
        }
        XCTAssertTrue(waitUntil(timeout: .seconds(30)) { blockEnd.load(ordering: .acquiring) != 0 })
        timer.cancel()
        let start = blockStart.load(ordering: .acquiring)
        let end = blockEnd.load(ordering: .acquiring)
        let during = ticks.all.filter { $0.firedAt.nanoseconds > start && $0.firedAt.nanoseconds < end }
        // About 100 are due; a timer sharing the blocked thread would get none.
        XCTAssertGreaterThan(during.count, 10, "the other thread's block does not stall this scheduler")
        withExtendedLifetime(blocker) {}
    }

    func testBadInputGetsClearErrorsOrDocumentedClamps() throws {
        let scheduler = TimerScheduler.shared
        func expectInvalid(_ body: () throws -> Any) {
            XCTAssertThrowsError(try body()) { error in
                guard case .invalidArgument = error as? PrecisionTimerError else {
                    return XCTFail("expected invalidArgument, got \(error)")
                }
            }
        }
        // A zero interval, a non-finite number of seconds, a negative leeway, no
        // buffered tick or the raw clock are precondition failures: PreconditionTrapTests.
        expectInvalid { try TimerScheduler(options: .init(priority: .realtime(0))) }
        expectInvalid { try TimerScheduler(options: .init(priority: .realtime(1000))) }
        expectInvalid { try TimerScheduler(options: .init(cpu: 4096)) }
        // Past the clock's range is "never" on a real thread too: accepted,
        // pending, cancellable, and the thread sleeps (it plans no wake-up).
        let never: [any ScheduledTimer] = [
            scheduler.repeating(every: .seconds(Int64.max)) { _ in },
            scheduler.repeating(everySeconds: 1e300) { _ in },
            scheduler.schedule(at: .max) { _ in },
            scheduler.schedule(after: .seconds(Int64.max)) { _ in },
        ]
        let fires = scheduler.statistics.fires
        usleep(20_000)
        XCTAssertEqual(scheduler.statistics.fires, fires)
        for t in never { t.cancel() }
        XCTAssertTrue(never.allSatisfy(\.isCancelled))
        let timer = scheduler.repeating(every: .seconds(1), leeway: .seconds(5)) { _ in }
        XCTAssertEqual(timer.leeway, .seconds(1) - .nanoseconds(1), "leeway clamped to just under the interval")
        try timer.setNextDeadline(.max)
        XCTAssertEqual(timer.nextDeadline, .max)
        timer.setInterval(.milliseconds(100))
        XCTAssertEqual(timer.leeway, .milliseconds(100) - .nanoseconds(1))
        // A negative delay fires as soon as possible (documented clamp), never lost.
        let fired = Atomic<Bool>(false)
        let past = scheduler.schedule(after: .seconds(-10)) { _ in fired.store(true, ordering: .releasing) }
        XCTAssertTrue(waitUntil { fired.load(ordering: .acquiring) })
        withExtendedLifetime(past) {}
    }
}
