import AsyncAlgorithms
import CMonoClock
import Foundation
@testable import PrecisionTimer
import Synchronization
import XCTest

// Clock-generic code under test: written against any `Clock`, as a library
// would write it, with nothing that knows about VirtualClock.

/// Runs `operation` up to `attempts` times, sleeping `initial`, 2×, 4×, … between
/// failures (exponential backoff).
func retrying<C: Clock, T: Sendable>(
    attempts: Int, initialDelay: C.Duration, clock: C, _ operation: () async throws -> T
) async throws -> T where C.Duration == Duration {
    var delay = initialDelay
    for attempt in 1... {
        do {
            return try await operation()
        } catch where attempt < attempts {
            try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
            delay *= 2
        }
    }
    fatalError("unreachable")
}

/// Races `operation` against `clock.sleep(for: limit)` in a task group: the
/// operation's value, or nil when the limit came first (the loser is cancelled).
func racingTimeout<C: Clock, T: Sendable>(
    _ limit: C.Duration, clock: C, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(until: clock.now.advanced(by: limit), tolerance: nil)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// `VirtualClock` as a `Clock` with `executor`: Clock-generic async code driven
/// by `await clock.advance(by:)` / `run()`, asserted exactly, with no
/// `Task.yield` and no real sleep. Each scenario runs `repetitions` times and
/// must leave the same trace every time (the determinism promise); CI runs them
/// at 1,000 (`PRECISIONTIMER_DETERMINISM_REPETITIONS`, default 1,000).
final class AsyncVirtualClockTests: XCTestCase {
    static var repetitions: Int {
        ProcessInfo.processInfo.environment["PRECISIONTIMER_DETERMINISM_REPETITIONS"].flatMap(Int.init) ?? 1_000
    }

    /// A trace of what happened, with the virtual instant it happened at.
    final class Trace: Sendable {
        private let events = Mutex<[String]>([])
        let origin: PrecisionClock.Instant
        init(origin: PrecisionClock.Instant) { self.origin = origin }
        func record(_ what: String, at instant: PrecisionClock.Instant) {
            let ms = Double((instant - origin).saturatingNanoseconds) / 1e6
            events.withLock { $0.append("\(what) @\(ms)ms") }
        }
        var all: [String] { events.withLock { $0 } }
    }

    /// Runs `scenario` `repetitions` times on fresh clocks; every trace must
    /// equal the first, which must equal `expected`.
    func assertDeterministic(
        _ expected: [String], name: String = #function, file: StaticString = #filePath, line: UInt = #line,
        _ scenario: (VirtualClock, Trace) async throws -> Void
    ) async throws {
        for repetition in 0..<Self.repetitions {
            let clock = VirtualClock()
            let trace = Trace(origin: clock.now)
            try await scenario(clock, trace)
            guard trace.all == expected else {
                XCTFail("repetition \(repetition): \(trace.all) != \(expected)", file: file, line: line)
                return
            }
            XCTAssertEqual(clock.sleepsOffExecutor, 0, file: file, line: line)
        }
        // CI greps these lines (`.ci/run`).
        print("determinism: \(name): \(Self.repetitions) repetitions, identical traces")
    }

    struct Flaky: Error {}

    func testRetryWithExponentialBackoffWakesAtExactInstants() async throws {
        try await assertDeterministic([
            "attempt 1 @0.0ms", "attempt 2 @100.0ms", "attempt 3 @300.0ms", "attempt 4 @700.0ms",
            "result 42 @700.0ms", "advanced @1000.0ms",
        ]) { clock, trace in
            let attempts = Mutex(0)
            let task = Task(executorPreference: clock.executor) {
                let value = try await retrying(attempts: 5, initialDelay: .milliseconds(100), clock: clock) {
                    () throws -> Int in
                    let n = attempts.withLock { $0 += 1; return $0 }
                    trace.record("attempt \(n)", at: clock.now)
                    if n < 4 { throw Flaky() }
                    return 42
                }
                trace.record("result \(value)", at: clock.now)
            }
            await clock.advance(by: .milliseconds(1000))
            // The advance returned after the task ran to its end.
            trace.record("advanced", at: clock.now)
            try await task.value
        }
    }

    func testATimeoutRacingAnOperationInATaskGroupIsDecidedAtTheExactInstant() async throws {
        try await assertDeterministic([
            "fast: 7 @250.0ms", "slow: nil @1000.0ms", "after run @1000.0ms",
        ]) { clock, trace in
            let slow = Task(executorPreference: clock.executor) {
                let r = try await racingTimeout(.seconds(1), clock: clock) {
                    try await clock.sleep(until: clock.now + .seconds(2))
                    return 1
                }
                trace.record("slow: \(r.map(String.init) ?? "nil")", at: clock.now)
            }
            let fast = Task(executorPreference: clock.executor) {
                let r = try await racingTimeout(.seconds(1), clock: clock) {
                    try await clock.sleep(until: clock.now + .milliseconds(250))
                    return 7
                }
                trace.record("fast: \(r.map(String.init) ?? "nil")", at: clock.now)
            }
            // Tasks that prefer clock.executor run only inside an advance.
            XCTAssertEqual(clock.executor.queuedJobs, 2)
            await clock.run()
            trace.record("after run", at: clock.now)
            try await slow.value
            try await fast.value
        }
    }

    func testAsyncTimerSequenceTicksOncePerAdvanceAtTheIntervalsInstants() async throws {
        try await assertDeterministic([
            "tick @1000.0ms", "after advance 1 @1000.0ms",
            "tick @2000.0ms", "after advance 2 @2000.0ms",
            "after half an interval @2500.0ms",
            "tick @3000.0ms", "after advance 3 @3000.0ms",
            "tick @4000.0ms", "tick @5000.0ms", "after advance 5 @5000.0ms",
        ]) { clock, trace in
            let consumer = Task(executorPreference: clock.executor) {
                var n = 0
                for await _ in AsyncTimerSequence(interval: .seconds(1), clock: clock) {
                    trace.record("tick", at: clock.now)
                    n += 1
                    if n == 5 { break }
                }
            }
            await clock.advance(by: .seconds(1))
            trace.record("after advance 1", at: clock.now)
            await clock.advance(by: .seconds(1))
            trace.record("after advance 2", at: clock.now)
            await clock.advance(by: .milliseconds(500))
            trace.record("after half an interval", at: clock.now)
            await clock.advance(by: .milliseconds(500))
            trace.record("after advance 3", at: clock.now)
            await clock.advance(by: .seconds(2))
            trace.record("after advance 5", at: clock.now)
            await consumer.value
        }
    }

    func testTasksWokenAtOneInstantRunThereInTheOrderTheySleptAndReadThatInstant() async throws {
        try await assertDeterministic([
            "a @10.0ms", "b @10.0ms", "c @10.0ms", "b again @15.0ms", "a again @20.0ms", "end @30.0ms",
        ]) { clock, trace in
            let deadline = clock.now + .milliseconds(10)
            for (name, then) in [("a", 10), ("b", 5), ("c", 0)] {
                Task(executorPreference: clock.executor) {
                    try await clock.sleep(until: deadline)
                    trace.record(name, at: clock.now)
                    guard then > 0 else { return }
                    try await Task.sleep(for: .milliseconds(then), clock: clock)
                    trace.record("\(name) again", at: clock.now)
                }
            }
            // One advance past every deadline: time stops at each (10, 15, 20 ms).
            await clock.advance(by: .milliseconds(30))
            trace.record("end", at: clock.now)
        }
    }

    func testSleepUntilNowReturnsAtOnceWithoutAnAdvance() async throws {
        let clock = VirtualClock()
        try await clock.sleep(until: clock.now)
        try await clock.sleep(until: clock.now - .seconds(1))
        try await clock.sleep(for: .zero)
        XCTAssertEqual(clock.now, VirtualClock().now)
    }

    func testCancellationEndsAVirtualSleepAtOnceAndRunSkipsNeverDeadlines() async throws {
        let clock = VirtualClock()
        let never = Task(executorPreference: clock.executor) { () -> Bool in
            do {
                try await clock.sleep(until: .max)
                return false
            } catch {
                return error is CancellationError
            }
        }
        await clock.run()  // the sleep is registered; run() does not wait for "never"
        XCTAssertEqual(clock.now, VirtualClock().now)
        never.cancel()
        await clock.advance(by: .zero)  // the cancelled task resumes on the executor
        let cancelled = await never.value
        XCTAssertTrue(cancelled)
    }

    /// "Never" stays never at the end of time: once virtual time has saturated
    /// at `.max`, a sleep until `.max` (the clock's, a virtual scheduler's, or a
    /// duration that saturates there) still waits for its cancel.
    func testASleepUntilMaxAtTheEndOfTimeStillWaitsForItsCancel() async throws {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        await clock.advance(to: .max)
        XCTAssertEqual(clock.now, .max)
        let sleeps: [@Sendable () async throws -> Void] = [
            { try await clock.sleep(until: .max) },
            { try await Task.sleep(for: .seconds(Int64.max), clock: clock) },
            { try await scheduler.sleep(until: .max) },
        ]
        for (index, sleep) in sleeps.enumerated() {
            let task = Task(executorPreference: clock.executor) { () -> Bool in
                do {
                    try await sleep()
                    return false
                } catch {
                    return error is CancellationError
                }
            }
            await clock.run()
            task.cancel()
            await clock.advance(by: .zero)
            let cancelled = await task.value
            XCTAssertTrue(cancelled, "sleep \(index) returned at the end of time")
        }
        withExtendedLifetime(scheduler) {}
    }

    /// The first sleep on a clock makes the clock's sleep engine. An advance on
    /// another thread must see that engine from the moment a sleep can reach
    /// it: otherwise a sleep queued on it there waits for a further advance.
    func testTheSleepEngineIsDrivenByTheClockOnceAnyThreadCanSeeIt() async throws {
        for round in 0..<20_000 {
            let clock = VirtualClock()
            // Empty: not yet; true: seen and driven; false: seen, not driven.
            let seen = Recorder<Bool>()
            let watching = DeinitFlag()
            let watcher = Thread {
                watching.set()
                let giveUp = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < giveUp {
                    guard let engine = clock.sleepEngineIfMade else { continue }
                    let driven = clock.drivenEngines.contains { $0 === engine }
                    seen.append(driven)
                    return
                }
            }
            watcher.start()
            while !watching.isSet { await Task.yield() }
            _ = clock.sleepEngine
            while seen.count == 0 { await Task.yield() }
            guard seen.all == [true] else {
                XCTFail("round \(round): the sleep engine was visible before the clock drove it")
                return
            }
        }
    }

    func testASleepFromATaskOffTheExecutorIsCountedAndStillFiresInOrder() async throws {
        let clock = VirtualClock()
        let registered = DispatchSemaphore(value: 0)
        // An unstructured task does not inherit the executor preference.
        let off = Task.detached { () -> PrecisionClock.Instant in
            let sleep = Task {
                try await clock.sleep(until: clock.now + .seconds(1))
                return clock.now
            }
            registered.signal()
            return try await sleep.value
        }
        registered.wait()
        // Wait (really) for the sleep to start: it is off the executor. (Its
        // timer may reach the clock only during the advance: see the next test.)
        while clock.sleepsOffExecutor == 0 { await Task.yield() }
        XCTAssertEqual(clock.sleepsOffExecutor, 1)
        await clock.advance(by: .seconds(2))
        // It fired at its deadline; its task ran on its own executor, so the test
        // awaits its result instead of assuming it ran during the advance.
        let wokeAt = try await off.value
        XCTAssertGreaterThanOrEqual(wokeAt, VirtualClock().now + .seconds(1))
    }

    /// An unstructured task's sleep can start while the test's advance moves
    /// time past its deadline: after the sleep read `now`, before its timer is
    /// on the clock. It must end (its deadline has come), not wait for another
    /// advance. Each round starts the advance at a different moment of the
    /// sleep's start, to land in that stretch.
    func testAnOffExecutorSleepStartedDuringAnAdvancePastItsDeadlineEnds() async throws {
        for round in 0..<3_000 {
            let clock = VirtualClock()
            let deadline = clock.now + .milliseconds(1)
            let started = DeinitFlag()
            let sleeper = Task.detached { () -> PrecisionClock.Instant in
                started.set()
                try await clock.sleep(until: deadline)
                return clock.now
            }
            while !started.isSet { await Task.yield() }
            for _ in 0..<(round % 50) * 20 { cmc_cpu_relax() }
            await clock.advance(by: .milliseconds(2))
            let woke = try await withWatchdog {
                try await withTaskCancellationHandler { try await sleeper.value } onCancel: { sleeper.cancel() }
            }
            guard let woke else {
                XCTFail("round \(round): the sleep did not end after the advance past its deadline")
                return
            }
            XCTAssertGreaterThanOrEqual(woke, deadline)
        }
    }

    func testClockGenericCodeRunsOnAVirtualClockTypedAsAnyClock() async throws {
        func elapsed<C: Clock>(on clock: C, sleeping d: C.Duration) async throws -> C.Duration {
            let start = clock.now
            try await clock.sleep(until: start.advanced(by: d), tolerance: nil)
            return start.duration(to: clock.now)
        }
        let clock = VirtualClock()
        let any: any Clock<Duration> = clock
        let task = Task(executorPreference: clock.executor) { try await elapsed(on: clock, sleeping: .milliseconds(3)) }
        await clock.run()
        let d = try await task.value
        XCTAssertEqual(d, .milliseconds(3))
        XCTAssertEqual(any.minimumResolution, .nanoseconds(1))
    }
}
