import CMonoClock
@testable import PrecisionTimer
import Synchronization
import XCTest

// The Swift snippets of the catalog's *Time in async code* article
// (Sources/PrecisionTimer/PrecisionTimer.docc/TimeInAsyncCode.md), verbatim
// between the markers, compiled and run so they stay true. Real time on a
// shared machine: lateness bounds are generous; what must hold exactly (the
// thread, the order, the number of fires, never early, exact virtual instants)
// is asserted exactly.

// --- snippet 2 begins ---
actor ControlLoop {
    let scheduler: TimerScheduler          // keep it: the executor reference is unowned
    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

    private(set) var lateness: [Duration] = []   // one entry per cycle
    private(set) var output = 0.0

    init(options: TimerScheduler.Options) throws {
        scheduler = try TimerScheduler(options: options)
    }

    /// Runs `cycles` cycles at a fixed rate, on an absolute grid.
    func run(every period: Duration, cycles: Int) async throws {
        let clock = PrecisionClock.monotonic
        var deadline = clock.now
        for _ in 0..<cycles {
            deadline += period                       // never `clock.now + period`: no drift
            try await clock.sleep(until: deadline)   // a timer of `scheduler`; resumes on its thread
            lateness.append(clock.now - deadline)    // never negative
            step()
        }
    }

    private func step() {
        output = 0.9 * output + 0.1                  // read the inputs, compute, write the outputs
    }
}
// --- snippet 2 ends ---

// --- snippet 5 begins ---
extension ControlLoop {
    /// The median and worst lateness so far. Sorting a long history is long
    /// work: it runs off the scheduler's thread while the actor waits for it,
    /// so the scheduler's timers (and other jobs) go on meanwhile.
    func latencySummary() async -> (p50: Duration, max: Duration) {
        let samples = lateness                       // a copy: cheap
        guard !samples.isEmpty else { return (.zero, .zero) }
        return await Task.detached {
            let sorted = samples.sorted()
            return (sorted[sorted.count / 2], sorted[sorted.count - 1])
        }.value
    }
}
// --- snippet 5 ends ---

extension ControlLoop {
    /// The thread the actor's code runs on (for the tests).
    func threadID() -> Int32 { cmc_thread_id() }
}

// --- snippet 6 begins ---
/// Runs `operation` up to `attempts` (at least 1) times, sleeping `backoff`, then twice
/// that, and so on, after each failure; the last failure is thrown.
func retry<T>(attempts: Int, backoff: Duration, clock: some Clock<Duration>,
              _ operation: () async throws -> T) async throws -> T {
    var delay = backoff
    for _ in 1..<attempts {
        do { return try await operation() } catch {}
        try await clock.sleep(for: delay)
        delay *= 2
    }
    return try await operation()
}
// --- snippet 6 ends ---

// --- snippet 7 begins ---
final class RetryBackoffTests: XCTestCase {
    struct Unavailable: Error {}

    func testRetryBacksOffOneHundredThenTwoHundredMilliseconds() async throws {
        let clock = VirtualClock()
        let start = clock.now
        let attempts = Mutex<[Duration]>([])               // when each attempt ran
        let task = Task(executorPreference: clock.executor) {
            try await retry(attempts: 4, backoff: .milliseconds(100), clock: clock) {
                let count = attempts.withLock { $0.append(clock.now - start); return $0.count }
                if count < 3 { throw Unavailable() }
                return "connected"
            }
        }
        await clock.advance(by: .milliseconds(99))         // the first attempt ran, at start
        XCTAssertEqual(attempts.withLock { $0 }, [.zero])
        await clock.advance(by: .milliseconds(1))          // the first backoff ends, not a nanosecond early
        XCTAssertEqual(attempts.withLock { $0 }, [.zero, .milliseconds(100)])
        await clock.advance(by: .seconds(10))              // time stops at 300 ms for the third attempt
        XCTAssertEqual(attempts.withLock { $0 }, [.zero, .milliseconds(100), .milliseconds(300)])
        let result = try await task.value
        XCTAssertEqual(result, "connected")
        XCTAssertEqual(clock.sleepsOffExecutor, 0)         // nothing slept outside the advances
    }
}
// --- snippet 7 ends ---

// --- snippet 8 begins ---
/// Calls `send` every `period`, on an absolute grid, from a task of its own,
/// until it is released.
final class KeepAlive<C: Clock<Duration>>: Sendable {
    private let task: Task<Void, Never>

    /// `executor` is where that task runs: nil (the global executor) in the
    /// program, the virtual clock's executor in a test.
    init(every period: Duration, clock: C, executor: (any TaskExecutor)? = nil,
         send: @escaping @Sendable (C.Instant) -> Void) {
        task = Task(executorPreference: executor) {
            var deadline = clock.now
            while true {
                deadline = deadline.advanced(by: period)
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                send(clock.now)
            }
        }
    }

    func stop() { task.cancel() }

    deinit { task.cancel() }
}
// --- snippet 8 ends ---

// --- snippet 9 begins ---
final class KeepAliveTests: XCTestCase {
    func testKeepAliveSendsOnItsGrid() async {
        let clock = VirtualClock()
        let start = clock.now
        let sent = Mutex<[Duration]>([])
        let keepAlive = KeepAlive(every: .seconds(5), clock: clock, executor: clock.executor) { now in
            sent.withLock { $0.append(now - start) }
        }
        await clock.advance(by: .seconds(12))
        XCTAssertEqual(sent.withLock { $0 }, [.seconds(5), .seconds(10)])
        await clock.advance(by: .seconds(3))
        XCTAssertEqual(sent.withLock { $0 }, [.seconds(5), .seconds(10), .seconds(15)])
        XCTAssertEqual(clock.sleepsOffExecutor, 0)
        keepAlive.stop()
        await clock.advance(by: .zero)  // the cancelled task ends on the executor: nothing left queued
    }
}
// --- snippet 9 ends ---

final class TimeInAsyncCodeSnippetTests: XCTestCase {
    private func threadOf(_ scheduler: TimerScheduler) -> Int32 {
        scheduler.engine.threadID.load(ordering: .acquiring)
    }

    func testSnippet1ATaskThatPrefersTheSchedulerSleepsOnItsTimers() async throws {
        // --- snippet 1 begins ---
        let scheduler = try TimerScheduler(options: .init(name: "sampler"))
        let lateness = try await Task(executorPreference: scheduler) {
            let clock = PrecisionClock.monotonic
            var deadline = clock.now
            var lateness: [Duration] = []
            for _ in 0..<100 {
                deadline += .milliseconds(1)               // an absolute grid
                try await clock.sleep(until: deadline)     // a timer of `scheduler`, not of .shared
                lateness.append(clock.now - deadline)      // on the scheduler's thread, no hop
            }
            return lateness
        }.value
        // --- snippet 1 ends ---
        XCTAssertEqual(lateness.count, 100)
        XCTAssertEqual(lateness.filter { $0 < .zero }.count, 0, "a wake before its deadline")
        // The sleeps were timers of this scheduler, not of .shared (a deadline
        // already past when the loop got to it, on a loaded machine, returns
        // without a timer), and each sleep ran as three jobs on this thread (the
        // switch to the engine's sleep executor, the sleep's end, the switch back
        // that runs the loop's code), plus the task's start and end: no hop
        // through another executor.
        let stats = scheduler.statistics
        XCTAssertGreaterThan(stats.fires, 0)
        XCTAssertLessThanOrEqual(stats.fires, 100)
        XCTAssertGreaterThanOrEqual(stats.jobs, stats.fires)
        XCTAssertLessThanOrEqual(stats.jobs, 3 * stats.fires + 3)
        XCTAssertEqual(scheduler.engine.sleepsResumedElsewhere.load(ordering: .relaxed), 0)
        // Generous: a shared 2-core VM. On an absolute grid one stall lands in
        // the maximum whole, so the median is the bound; the maximum only
        // rules out a hang.
        XCTAssertLessThan(lateness.sorted()[lateness.count / 2], .milliseconds(200))
        XCTAssertLessThan(lateness.max()!, .seconds(10))
    }

    func testSnippet3TheControlLoopRunsOnARealtimePinnedScheduler() async throws {
        guard ThreadControls.allowedCPUs.contains(1) else {
            throw XCTSkip("the snippet pins to CPU 1, which this process may not use")
        }
        // --- snippet 3 begins ---
        let loop = try ControlLoop(options: .init(priority: .realtime(80), cpu: 1, name: "control"))
        try await loop.run(every: .milliseconds(1), cycles: 200)
        print(loop.scheduler.threadReport.realtime)   // granted(priority: 80), or refused(Operation not permitted (errno 1))
        // --- snippet 3 ends ---
        let lateness = await loop.lateness
        XCTAssertEqual(lateness.count, 200)
        XCTAssertEqual(lateness.filter { $0 < .zero }.count, 0, "a wake before its deadline")
        XCTAssertGreaterThan(loop.scheduler.statistics.fires, 0)
        XCTAssertLessThanOrEqual(loop.scheduler.statistics.fires, 200)
        let thread = await loop.threadID()
        XCTAssertEqual(thread, threadOf(loop.scheduler))
        // The actor's sleeps resumed on the scheduler's thread, not via the pool.
        XCTAssertEqual(loop.scheduler.engine.sleepsResumedElsewhere.load(ordering: .relaxed), 0)
        XCTAssertGreaterThanOrEqual(loop.scheduler.statistics.jobs, loop.scheduler.statistics.fires)
        XCTAssertLessThan(lateness.sorted()[lateness.count / 2], .milliseconds(200))
        XCTAssertLessThan(lateness.max()!, .seconds(10))
        let output = await loop.output
        XCTAssertEqual(output, (0..<200).reduce(0.0) { x, _ in 0.9 * x + 0.1 })
    }

    func testSnippet4ATimerHandlerReadsTheActorInPlace() async throws {
        let loop = try ControlLoop(options: .init(name: "control"))
        let running = Task { try await loop.run(every: .milliseconds(1), cycles: 150) }
        // --- snippet 4 begins ---
        let watchdog = loop.scheduler.repeating(every: .milliseconds(10)) { tick in
            let output = loop.assumeIsolated { $0.output }   // the actor's thread: no await, no hop
            if output > 1 { print("output \(output) out of range at tick \(tick.index)") }
            if tick.index >= 9 { tick.cancelTimer() }
        }
        // --- snippet 4 ends ---
        try await running.value
        let end = ContinuousClock.now + .seconds(30)
        while !watchdog.isCancelled && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertTrue(watchdog.isCancelled, "the watchdog never reached tick 9")
        // At most 150 cycles and 10 watchdog ticks, all on the loop's scheduler.
        XCTAssertLessThanOrEqual(loop.scheduler.statistics.fires, 160)
        let output = await loop.output
        XCTAssertEqual(output, (0..<150).reduce(0.0) { x, _ in 0.9 * x + 0.1 })
    }

    func testSnippet5TheSummaryIsComputedOffTheThreadAndIsExact() async throws {
        let loop = try ControlLoop(options: .init(name: "control"))
        let empty = await loop.latencySummary()
        XCTAssertEqual(empty.p50, .zero)
        XCTAssertEqual(empty.max, .zero)
        try await loop.run(every: .milliseconds(1), cycles: 50)
        let summary = await loop.latencySummary()
        let sorted = await loop.lateness.sorted()
        XCTAssertEqual(summary.p50, sorted[25])
        XCTAssertEqual(summary.max, sorted[49])
        XCTAssertGreaterThanOrEqual(summary.p50, .zero)
        // Back on the actor after the detached task: its thread is the scheduler's.
        let thread = await loop.threadID()
        XCTAssertEqual(thread, threadOf(loop.scheduler))
    }

    func testSnippet6RetryOnTheRealClockReturnsTheLastFailure() async throws {
        // The same function on a real clock: two attempts, one 1 ms backoff,
        // and the last failure is what the caller gets.
        struct Down: Error {}
        let calls = Mutex(0)
        let clock = PrecisionClock.monotonic
        let t0 = clock.now
        do {
            _ = try await retry(attempts: 2, backoff: .milliseconds(1), clock: clock) { () throws -> Int in
                calls.withLock { $0 += 1 }
                throw Down()
            }
            XCTFail("retry returned")
        } catch {
            XCTAssertTrue(error is Down)
        }
        XCTAssertEqual(calls.withLock { $0 }, 2)
        XCTAssertGreaterThanOrEqual(clock.now - t0, .milliseconds(1))
    }
}
