import AsyncAlgorithms
import PrecisionTimer
import Synchronization
import XCTest

final class AsyncTests: XCTestCase {
    func testAsyncSleepNeverWakesEarly() async throws {
        let clock = PrecisionClock()
        for _ in 0..<20 {
            let deadline = clock.now + .microseconds(700)
            try await clock.sleep(until: deadline)
            XCTAssertGreaterThanOrEqual(clock.now, deadline)
        }
        let deadline = clock.now + .milliseconds(2)
        try await clock.sleep(until: deadline, tolerance: .milliseconds(1))
        XCTAssertGreaterThanOrEqual(clock.now, deadline)
    }

    func testAsyncSleepCancellationThrowsPromptlyAndLeavesNothingBehind() async throws {
        let clock = PrecisionClock()
        let liveBefore = TimerScheduler.shared.statistics.liveTimers
        let task = Task {
            try await clock.sleep(until: clock.now + .seconds(60))
        }
        try await Task.sleep(for: .milliseconds(20))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        XCTAssertLessThan(ContinuousClock.now - cancelledAt, .seconds(2), "cancellation is prompt")
        XCTAssertThrowsError(try result.get()) { error in
            XCTAssertTrue(error is CancellationError, "got \(error)")
        }
        XCTAssertEqual(TimerScheduler.shared.statistics.liveTimers, liveBefore, "the timer was removed")
        // A task cancelled before it sleeps throws at once.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: clock.now + .seconds(60))
        }
        let earlyResult = await early.result
        XCTAssertThrowsError(try earlyResult.get())
    }

    func testAsyncTimerSequenceFromSwiftAsyncAlgorithmsRunsOnThisClock() async throws {
        let clock = PrecisionClock()
        let start = clock.now
        var instants: [PrecisionClock.Instant] = []
        for await instant in AsyncTimerSequence(interval: .milliseconds(5), clock: clock) {
            instants.append(instant)
            if instants.count == 4 { break }
        }
        XCTAssertEqual(instants.count, 4)
        XCTAssertGreaterThanOrEqual(clock.now - start, .milliseconds(20))
        XCTAssertEqual(instants, instants.sorted())
    }

    func testDebounceFromSwiftAsyncAlgorithmsRunsOnThisClock() async throws {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let debounced = stream.debounce(for: .milliseconds(30), clock: PrecisionClock())
        let received = Recorder<Int>()
        let task = Task {
            for await v in debounced { received.append(v) }
        }
        for i in 0..<5 { continuation.yield(i) }  // a burst: only the last survives
        XCTAssertTrue(waitUntil { received.count >= 1 }, "the burst's last value came out")
        continuation.yield(99)
        XCTAssertTrue(waitUntil { received.count >= 2 })
        continuation.finish()
        await task.value
        XCTAssertEqual(received.all, [4, 99])
    }

    func testTickSequenceDeliversTicksAndCancelsTheTimerWhenDropped() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-ticks"))
        var ticks: [Tick] = []
        do {
            // `.burst`: every tick exactly once and in order, however late a wake.
            let sequence = scheduler.ticks(every: .milliseconds(3), policy: .burst, buffering: .all)
            for await tick in sequence {
                ticks.append(tick)
                if ticks.count == 5 { break }
            }
        }
        XCTAssertEqual(ticks.map(\.index), [0, 1, 2, 3, 4])
        for tick in ticks {
            XCTAssertGreaterThanOrEqual(tick.firedAt, tick.deadline)
        }
        // The sequence and its iterator are gone: so is the timer.
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }
}
