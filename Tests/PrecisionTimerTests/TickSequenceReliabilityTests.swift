@testable import PrecisionTimer
import Foundation
import Synchronization
import XCTest

/// Reliability of ``TickSequence``: cancellation of its consumer, and the ticks
/// its buffer drops.
final class TickSequenceReliabilityTests: XCTestCase {
    // MARK: - Cancelling the consumer (issue item 4)

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
                guard let sequence = try? scheduler.ticks(every: .microseconds(50)) else { break }
                let done = DispatchSemaphore(value: 0)
                let task = Task {
                    var n = 0
                    for await _ in sequence { n += 1 }
                    done.signal()
                    return n
                }
                usleep(UInt32(300 + (i % 9) * 100))
                task.cancel()  // with the bug, sooner or later this never returns
                guard done.wait(timeout: .now() + 2) == .success else {
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
        // a couple of seconds (an iteration takes about a millisecond).
        var returned = false
        var last = -1
        var lastChange = ContinuousClock.now
        while !returned {
            returned = finished.wait(timeout: .now() + .milliseconds(100)) == .success
            let now = progress.load(ordering: .relaxed)
            if now != last {
                last = now
                lastChange = ContinuousClock.now
            } else if ContinuousClock.now - lastChange > .seconds(3) {
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
}
