import CMonoClock
@testable import PrecisionTimer
import Synchronization
import XCTest

/// ``PrecisionClock/withTimeout(until:tolerance:operation:)``: an operation raced
/// against a deadline on the shared scheduler (real time: bounds are generous).
final class TimeoutTests: XCTestCase {
    private struct Failure: Error, Equatable {}

    /// What an operation saw: that it started, and that it was cancelled.
    private final class Probe: Sendable {
        let started = Atomic<Bool>(false)
        let sawCancellation = Atomic<Bool>(false)
        let ended = Atomic<Bool>(false)

        /// Sleeps `seconds`, recording a cancellation if one comes.
        func sleep(seconds: Int) async throws -> Int {
            started.store(true, ordering: .releasing)
            defer { ended.store(true, ordering: .releasing) }
            do {
                try await Task.sleep(for: .seconds(seconds))
            } catch is CancellationError {
                sawCancellation.store(true, ordering: .releasing)
                throw CancellationError()
            }
            return seconds
        }
    }

    func testOperationFirstReturnsItsValueAndEndsTheDeadlineSleep() async throws {
        let clock = PrecisionClock()
        let start = ContinuousClock.now
        let result = try await clock.withTimeout(until: clock.now + .seconds(60)) { 42 }
        XCTAssertEqual(result, .completed(42))
        XCTAssertEqual(result.value, 42)
        XCTAssertFalse(result.didTimeOut)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(20), "the deadline's sleep was cancelled, not awaited")
    }

    func testDeadlineFirstCancelsTheOperationAndWaitsForIt() async throws {
        let clock = PrecisionClock()
        let probe = Probe()
        let deadline = clock.now + .milliseconds(50)
        let result = try await clock.withTimeout(until: deadline, tolerance: .zero) { try await probe.sleep(seconds: 60) }
        XCTAssertEqual(result, .timedOut)
        XCTAssertNil(result.value)
        XCTAssertTrue(result.didTimeOut)
        XCTAssertGreaterThanOrEqual(clock.now, deadline, "never before the deadline")
        XCTAssertTrue(probe.sawCancellation.load(ordering: .acquiring), "the operation observed its cancellation")
        XCTAssertTrue(probe.ended.load(ordering: .acquiring), "structured: the operation ended before the return")
    }

    func testAnOperationThatIgnoresCancellationIsAwaitedAndItsValueDropped() async throws {
        let clock = PrecisionClock()
        let finished = Atomic<Bool>(false)
        let result = try await clock.withTimeout(for: .milliseconds(20)) { () -> Int in
            // Runs until the deadline cancels it (however late that comes on a
            // stalled machine; 10 s at most), then goes on, deaf to it.
            let cap = ContinuousClock.now + .seconds(10)
            while !Task.isCancelled && ContinuousClock.now < cap { await Task.yield() }
            let end = ContinuousClock.now + .milliseconds(50)
            while ContinuousClock.now < end { await Task.yield() }
            finished.store(true, ordering: .releasing)
            return 7
        }
        XCTAssertEqual(result, .timedOut)
        XCTAssertTrue(finished.load(ordering: .acquiring))
    }

    func testDeadlineAlreadyPastTimesOutWithoutStartingTheOperation() async throws {
        let clock = PrecisionClock()
        let probe = Probe()
        for deadline in [clock.now, clock.now - .seconds(1), .min] {
            let result = try await clock.withTimeout(until: deadline) { try await probe.sleep(seconds: 60) }
            XCTAssertEqual(result, .timedOut, "\(deadline)")
        }
        let zero = try await clock.withTimeout(for: .zero) { try await probe.sleep(seconds: 60) }
        XCTAssertEqual(zero, .timedOut)
        XCTAssertFalse(probe.started.load(ordering: .acquiring))
    }

    func testANeverDeadlineLetsTheOperationFinish() async throws {
        let clock = PrecisionClock(.boottime)
        let result = try await clock.withTimeout(until: .max) { () -> String in
            try await Task.sleep(for: .milliseconds(10))
            return "done"
        }
        XCTAssertEqual(result, .completed("done"))
        let huge = try await clock.withTimeout(for: .seconds(Int64.max)) { 1 }
        XCTAssertEqual(huge, .completed(1))
    }

    func testTheOperationsErrorBeforeTheDeadlineIsThrown() async throws {
        let clock = PrecisionClock()
        do {
            _ = try await clock.withTimeout(for: .seconds(60)) { () -> Int in throw Failure() }
            XCTFail("expected the operation's error")
        } catch {
            XCTAssertEqual(error as? Failure, Failure())
        }
    }

    func testCallerCancelledWhileRacingThrowsCancellationErrorAfterTheOperationEnds() async throws {
        let clock = PrecisionClock()
        let probe = Probe()
        let task = Task {
            try await clock.withTimeout(for: .seconds(60)) { try await probe.sleep(seconds: 60) }
        }
        while !probe.started.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        await assertCancelThrowsCancellationError(task)
        XCTAssertTrue(probe.sawCancellation.load(ordering: .acquiring))
        XCTAssertTrue(probe.ended.load(ordering: .acquiring))
    }

    /// The caller cancelled before the deadline, in a task that prefers a
    /// scheduler whose spin before the deadline resumes the deadline's sleep
    /// early (a 3 ms spin, the cancel 1.5 ms before the deadline): the call
    /// throws `CancellationError`, never `.timedOut`. A round counts only when
    /// the cancel returned before the deadline.
    func testCallerCancelledInsideTheSpinBeforeTheDeadlineThrowsNotTimedOut() async throws {
        let scheduler = try spinningScheduler(name: "timeout-cancel-spin", spinsLast: .milliseconds(3))
        let clock = PrecisionClock()
        var conclusive = 0
        for _ in 0..<12 {
            let deadline = clock.now + .milliseconds(8)
            let task = Task(executorPreference: scheduler) {
                await timeoutOutcome {
                    try await clock.withTimeout(until: deadline) {
                        try await clock.sleep(until: deadline + .milliseconds(20))  // cooperative
                        return 1
                    }
                }
            }
            let cancel = TimedCancel(task, at: deadline - .microseconds(1_500))
            let outcome = await task.value
            let returned = try await cancel.times().returned
            guard returned < deadline else { continue }
            conclusive += 1
            XCTAssertEqual(outcome, "cancelled", "cancel() returned \((deadline - returned).readable) before the deadline")
        }
        if conclusive == 0 { throw XCTSkip("no cancel returned before its deadline (a busy machine)") }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// A caller cancelled before the deadline and before the operation has
    /// finished gets `CancellationError`, also when the operation answers the
    /// cancel with a value at once: the value came after the cancel, so it is
    /// dropped, every time (the deadline's sleep, cancelled too, used to race it).
    func testAValueReturnedInAnswerToTheCallersCancelIsDropped() async throws {
        let clock = PrecisionClock()
        for round in 0..<20 {
            let probe = Probe()
            let task = Task {
                try await clock.withTimeout(for: .seconds(60)) { () -> Int in
                    (try? await probe.sleep(seconds: 60)) ?? 7  // answers the cancel with 7
                }
            }
            while !probe.started.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
            task.cancel()
            let result = await task.result
            XCTAssertThrowsError(try result.get(), "round \(round)") { XCTAssertTrue($0 is CancellationError, "\($0)") }
            XCTAssertTrue(probe.ended.load(ordering: .acquiring), "structured: the operation ended before the return")
        }
    }

    /// A caller's cancel that comes after the deadline does not win: the
    /// deadline came first, so the call times out, although the group sees
    /// the operation's end first. The operation holds the scheduler's thread
    /// 3 ms past the deadline, so the deadline's timer cannot fire before it
    /// ends, and the caller is cancelled 1 ms after the deadline. A round
    /// counts when the cancel was issued between the deadline and the
    /// operation's end.
    func testACallersCancelAfterTheDeadlineTimesOut() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "timeout-cancel-after"))
        let clock = PrecisionClock()
        var conclusive = 0
        for _ in 0..<10 {
            let deadline = clock.now + .milliseconds(5)
            let end = deadline + .milliseconds(3)
            let task = Task(executorPreference: scheduler) {
                await timeoutOutcome {
                    try await clock.withTimeout(until: deadline) { () -> Int in
                        while clock.now < end { cmc_cpu_relax() }  // deaf to the cancel
                        return 1
                    }
                }
            }
            let cancel = TimedCancel(task, at: deadline + .milliseconds(1))
            let outcome = await task.value
            let cancelAt = try await cancel.times().issued
            guard cancelAt >= deadline && cancelAt < end else { continue }
            conclusive += 1
            XCTAssertEqual(outcome, "timedOut", "cancelled \((cancelAt - deadline).readable) after the deadline")
        }
        if conclusive == 0 { throw XCTSkip("no cancel landed between the deadline and the operation's end") }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// The same within a tolerance: the deadline came first, then the
    /// caller's cancel, then the operation's answer to it (a value, or an
    /// error): `.timedOut`, whatever the answer. A tolerance only lets an
    /// operation that ends on its own complete after the deadline.
    func testACallersCancelAfterTheDeadlineWithinTheToleranceTimesOut() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "timeout-cancel-tolerance"))
        let clock = PrecisionClock()
        var conclusive = 0
        for round in 0..<10 {
            let deadline = clock.now + .milliseconds(5)
            let answersWithAnError = round % 2 == 1
            let task = Task(executorPreference: scheduler) {
                await timeoutOutcome {
                    try await clock.withTimeout(until: deadline, tolerance: .milliseconds(20)) {
                        () -> Int in
                        // Holds the scheduler's thread until the caller's cancel, then answers it.
                        let cap = clock.now + .seconds(5)
                        while !Task.isCancelled && clock.now < cap { cmc_cpu_relax() }
                        if answersWithAnError { throw Failure() }
                        return 42
                    }
                }
            }
            let cancel = TimedCancel(task, at: deadline + .milliseconds(1))
            let outcome = await task.value
            let cancelAt = try await cancel.times().issued
            guard cancelAt >= deadline else { continue }
            conclusive += 1
            XCTAssertEqual(outcome, "timedOut", "round \(round): cancelled \((cancelAt - deadline).readable) after the deadline")
        }
        if conclusive == 0 { throw XCTSkip("no cancel landed after the deadline") }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// A value the operation returned before the caller's cancel is returned.
    func testAValueReturnedBeforeTheCallersCancelIsReturned() async throws {
        let clock = PrecisionClock()
        let returned = DispatchSemaphore(value: 0)
        let task = Task {
            try await clock.withTimeout(for: .seconds(60)) { () -> Int in
                defer { returned.signal() }
                return 5
            }
        }
        returned.wait()  // the operation has returned its value: cancel the caller now
        usleep(1_000)
        task.cancel()
        let result = await task.result
        switch result {
        case .success(let value): XCTAssertEqual(value, .completed(5))
        case .failure(let error):
            // The group may see the value only after the cancel; it still came first.
            XCTFail("the value came before the cancel, yet: \(error)")
        }
    }

    /// The rule on its own, as a table: which of the operation's end, the
    /// deadline (100, tolerance 0 or 20) and the caller's cancel came first,
    /// whatever order the group handed the children over in.
    func testTheRuleDecidesByTheInstantsOfTheThreeEvents() {
        typealias Row = (String, ended: Int64, first: Bool, cancelled: Int64?, tolerance: Int64, TimeoutRule.Verdict)
        let rows: [Row] = [
            ("the operation ends before the deadline, no cancel", 50, true, nil, 0, .operation),
            ("the same, its child handed over after the deadline's sleep", 50, false, nil, 0, .operation),
            ("the operation ends before a cancel before the deadline", 50, true, 60, 0, .operation),
            ("a cancel before the deadline, then the operation ends", 70, true, 60, 0, .cancelled),
            ("a cancel before the deadline, the operation answers after it", 130, false, 60, 0, .cancelled),
            ("a cancel and the end at the same instant: the cancel", 60, true, 60, 0, .cancelled),
            ("the deadline, then the operation ends on its own", 130, true, nil, 0, .timedOut),
            ("the deadline, then the operation answers its cancel", 101, false, nil, 20, .timedOut),
            ("the deadline, then an end on its own within the tolerance", 110, true, nil, 20, .operation),
            ("the same, handed over after the deadline's sleep", 110, false, nil, 20, .timedOut),
            ("the same, past the tolerance", 125, true, nil, 20, .timedOut),
            ("the deadline, a cancel, then the answer within the tolerance", 112, true, 110, 20, .timedOut),
            ("the deadline, the end within the tolerance, then a cancel", 105, true, 110, 20, .operation),
            ("the deadline, a cancel, then an end past it", 300, true, 150, 0, .timedOut),
            ("a cancel at the deadline's instant: the deadline came first", 130, true, 100, 0, .timedOut),
            ("a tolerance that would overflow saturates", 200, true, nil, .max, .operation),
            ("a negative tolerance is zero", 101, true, nil, -50, .timedOut),
        ]
        for (name, ended, first, cancelled, tolerance, verdict) in rows {
            XCTAssertEqual(TimeoutRule.decide(operationEndedAt: ended, operationFirst: first, cancelledAt: cancelled,
                                              deadline: 100, tolerance: tolerance), verdict, name)
        }
    }

    func testCallerAlreadyCancelledThrowsWithoutStartingTheOperation() async throws {
        let clock = PrecisionClock()
        let probe = Probe()
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await clock.withTimeout(for: .seconds(60)) { try await probe.sleep(seconds: 60) }
        }
        await assertCancelThrowsCancellationError(task)
        XCTAssertFalse(probe.started.load(ordering: .acquiring))
    }

    /// The caller is cancelled inside the call, before the deadline, and its
    /// thread is then held past the deadline (as a preemption would) before
    /// the call reads the clock (`.checked`) or starts the race (`.racing`):
    /// the cancel came first, so the call throws `CancellationError`, not
    /// `.timedOut`. The cancel is read when it comes, not when the call next
    /// looks. Without the test hook (release builds) the same holds.
    func testACancelBeforeTheDeadlineWinsThoughTheCallLooksAfterIt() async throws {
        let clock = PrecisionClock()
        for point in [TimeoutTestHook.Point.checked, .racing] {
            let deadline = clock.now + .milliseconds(5)
            let cancelledAt = Mutex<PrecisionClock.Instant?>(nil)
            let hook: @Sendable (TimeoutTestHook.Point) -> Void = { at in
                guard at == point else { return }
                cancelledAt.withLock { $0 = clock.now }
                withUnsafeCurrentTask { $0?.cancel() }
                while clock.now < deadline + .milliseconds(1) { cmc_cpu_relax() }
            }
            // A task of its own: the hook cancels the task it runs in.
            let outcome = await Task {
                await TimeoutTestHook.$current.withValue(hook) {
                    await timeoutOutcome {
                        try await clock.withTimeout(until: deadline) {
                            try await clock.sleep(until: deadline + .seconds(10))
                            return 1
                        }
                    }
                }
            }.value
            let cancelled = try XCTUnwrap(cancelledAt.withLock { $0 }, "the hook ran at \(point)")
            guard cancelled < deadline else { continue }  // the thread was held before the hook: inconclusive
            XCTAssertEqual(outcome, "cancelled", "cancelled \((deadline - cancelled).readable) before the deadline, at \(point)")
        }
    }
}

/// What a `withTimeout` call came to, in one word: "completed", "timedOut",
/// "cancelled" (it threw `CancellationError`), or the other error it threw.
private func timeoutOutcome<T>(_ call: () async throws -> TimeoutResult<T>) async -> String {
    do {
        return try await call().didTimeOut ? "timedOut" : "completed"
    } catch is CancellationError {
        return "cancelled"
    } catch {
        return "\(error)"
    }
}
