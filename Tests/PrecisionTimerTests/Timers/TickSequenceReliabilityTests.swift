@testable import PrecisionTimer
import Foundation
import Synchronization
import XCTest

/// Reliability of ``TickSequence``: cancellation of its consumer, and the ticks
/// its buffer drops.
final class TickSequenceReliabilityTests: XCTestCase {
    // MARK: - Cancelling the consumer

    /// Cancelling the task that consumes a sequence must not deadlock, however
    /// the cancel lines up with a tick being delivered.
    ///
    /// The bug: the runtime runs the cancellation handler of the consumer's
    /// `next()` on the cancelling thread while holding the task's status lock; the
    /// handler cancelled the timer synchronously, waiting for a running handler,
    /// and that handler, on the scheduler thread, was handing a tick to the very
    /// consumer, which needs the same lock. The loop runs on a thread of its own
    /// (not the cooperative pool) against a private scheduler, so a deadlock
    /// leaks only that thread and that scheduler: the test fails on its watchdog
    /// instead of hanging the run.
    func testCancellingTheConsumingTaskNeverDeadlocks() throws {
        let scheduler = try TimerScheduler(options: .init(name: "test-seq-cancel"))
        let budget: Duration = .seconds(4)
        let progress = Atomic<Int>(0)
        let hung = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            let end = ContinuousClock.now + budget
            var i = 0
            while ContinuousClock.now < end {
                let sequence = scheduler.ticks(every: .microseconds(50))
                let done = DispatchSemaphore(value: 0)
                let task = Task {
                    var n = 0
                    for await _ in sequence { n += 1 }
                    done.signal()
                    return n
                }
                usleep(UInt32(300 + (i % 9) * 100))
                task.cancel()  // with the bug, sooner or later this never returns
                guard done.wait(timeout: .now() + 10) == .success else {
                    hung.store(true, ordering: .relaxed)
                    break
                }
                i += 1
                progress.store(i, ordering: .relaxed)
            }
            finished.signal()
        }
        thread.start()
        // A watchdog on progress: a deadlock shows as no iteration completing for
        // 15 s (an iteration takes about a millisecond; a sanitizer or a stalled
        // host makes it slower, never that slow).
        var returned = false
        var last = -1
        var lastChange = ContinuousClock.now
        while !returned {
            returned = finished.wait(timeout: .now() + .milliseconds(100)) == .success
            let now = progress.load(ordering: .relaxed)
            if now != last {
                last = now
                lastChange = ContinuousClock.now
            } else if ContinuousClock.now - lastChange > .seconds(15) {
                break
            }
        }
        let iterations = progress.load(ordering: .relaxed)
        let ok = returned && !hung.load(ordering: .relaxed)
        XCTAssertTrue(ok, "task.cancel() or the consumer hung after \(iterations) good iterations (deadlock)")
        XCTAssertGreaterThan(iterations, 100, "too few iterations to mean anything")
        if ok {
            XCTAssertTrue(waitUntil(timeout: .seconds(5)) { scheduler.statistics.liveTimers == 0 },
                          "every cancelled consumer cancelled its timer")
        }
    }

    // MARK: - Ticks the buffer drops

    /// Takes `count` ticks from a fresh iterator of `sequence`, with a watchdog.
    private func take(_ count: Int, from sequence: TickSequence,
                      file: StaticString = #filePath, line: UInt = #line) async -> [Tick] {
        await withWatchdog(file: file, line: line) {
            var iterator = sequence.makeAsyncIterator()
            var ticks: [Tick] = []
            while ticks.count < count, let tick = await iterator.next() { ticks.append(tick) }
            return ticks
        } ?? []
    }

    func testLatestCountsTheTicksItDropsInMissed() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .latest)
        await clock.advance(by: .milliseconds(5))  // ticks 0...4 fire; nobody consumes
        let ticks = await take(1, from: sequence)
        XCTAssertEqual(ticks.map(\.index), [4])
        XCTAssertEqual(ticks.map(\.missed), [4], "ticks 0...3 were dropped by the buffer: missed must count them")
    }

    func testNewestCountsTheTicksItDropsInTheOldestKept() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .newest(2))
        await clock.advance(by: .milliseconds(5))
        let ticks = await take(2, from: sequence)
        XCTAssertEqual(ticks.map(\.index), [3, 4])
        XCTAssertEqual(ticks.map(\.missed), [3, 0], "0...2 dropped before 3; 4 follows 3")
    }

    func testDroppedTicksAddTheirOwnMissed() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .latest)
        await clock.advance(by: .milliseconds(2))  // 0 and 1 fire, 0 is dropped
        sequence.timer.suspend()
        await clock.advance(by: .milliseconds(3))  // 2, 3, 4 fall due while suspended
        sequence.timer.resume()  // one fire for 4 (the latest due), missed 2 (2 and 3)
        await clock.advance(by: .milliseconds(1))  // 5
        let ticks = await take(1, from: sequence)
        XCTAssertEqual(ticks.map(\.index), [5])
        XCTAssertEqual(ticks.map(\.missed), [5], "every grid tick before 5 is missed: dropped, or skipped by the engine")
    }

    func testAllKeepsEveryTick() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .all)
        await clock.advance(by: .milliseconds(5))
        let ticks = await take(5, from: sequence)
        XCTAssertEqual(ticks.map(\.index), [0, 1, 2, 3, 4])
        XCTAssertEqual(ticks.map(\.missed), [0, 0, 0, 0, 0])
    }

    /// Whatever the buffer and however the consumer lags, every delivered tick
    /// accounts for the grid ticks before it: `index == previous index + 1 + missed`.
    func testEveryGridTickIsDeliveredOrCountedMissed() async throws {
        var generator = SplitMix64(seed: 0x5EC)
        for limit in [1, 2, 3, 7] {
            let (scheduler, clock) = makeScheduler()
            let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .newest(limit))
            var buffered = 0
            var expectedNext = 0
            var unaccounted: [String] = []
            for _ in 0..<200 {
                let fired = Int(generator.next() % 5)
                await clock.advance(by: .milliseconds(fired))
                buffered = Swift.min(limit, buffered + fired)
                let consume = Int(generator.next() % UInt64(buffered + 1))
                let ticks = await take(consume, from: sequence)
                XCTAssertEqual(ticks.count, consume)
                buffered -= consume
                for tick in ticks {
                    if tick.index != expectedNext + tick.missed {
                        unaccounted.append("tick \(tick.index) missed \(tick.missed) after \(expectedNext - 1)")
                    }
                    expectedNext = tick.index + 1
                }
            }
            XCTAssertEqual(unaccounted.count, 0, "newest(\(limit)): ticks went unaccounted: \(unaccounted.prefix(4))...")
        }
    }

    // MARK: - Cancellation and the end of the sequence

    func testCancellingAWaitingConsumerReturnsNilAndCancelsTheTimer() async throws {
        let (scheduler, _) = makeScheduler()
        let sequence = scheduler.ticks(every: .seconds(1), buffering: .all)
        let consumer = Task {
            var iterator = sequence.makeAsyncIterator()
            return await iterator.next()
        }
        try await Task.sleep(for: .milliseconds(20))  // let it wait in next()
        consumer.cancel()
        let result = await withWatchdog { await consumer.value }
        if case .some(.some(let tick)) = result { XCTFail("a cancelled consumer gets nil, not \(tick)") }
        XCTAssertTrue(sequence.timer.isCancelled, "cancelling the consumer cancels the timer")
    }

    func testAConsumerCancelledBeforeItAsksGetsNil() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = scheduler.ticks(every: .milliseconds(1), buffering: .all)
        await clock.advance(by: .milliseconds(3))
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = sequence.makeAsyncIterator()
            return await iterator.next()
        }
        let result = await withWatchdog { await consumer.value }
        if case .some(.some(let tick)) = result {
            XCTFail("a cancelled consumer gets nil, even with ticks buffered, not tick \(tick.index)")
        }
        XCTAssertTrue(sequence.timer.isCancelled)
    }

    func testReleasingTheSequenceCancelsTheTimer() async throws {
        let (scheduler, clock) = makeScheduler()
        var sequence: TickSequence? = scheduler.ticks(every: .milliseconds(1), buffering: .all)
        await clock.advance(by: .milliseconds(2))
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        let ticks = await take(2, from: sequence!)
        XCTAssertEqual(ticks.map(\.index), [0, 1])
        sequence = nil
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "the sequence and its iterators are gone: so is the timer")
    }

    func testCancellingTheTimerEndsAWaitingConsumer() async throws {
        let (scheduler, _) = makeScheduler()
        let sequence = scheduler.ticks(every: .seconds(1), buffering: .latest)
        let consumer = Task {
            var count = 0
            for await _ in sequence { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(20))
        sequence.timer.cancel()
        let count = await withWatchdog { await consumer.value }
        XCTAssertEqual(count, 0)
    }
}
