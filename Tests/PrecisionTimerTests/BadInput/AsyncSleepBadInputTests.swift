@testable import PrecisionTimer
import XCTest

/// Bad input to async sleeps on a scheduler or a ``PrecisionClock``
/// (`Timers/TimerScheduler+Sleep.swift`). `CONTRIBUTING.md` names these tests row by row against
/// the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class AsyncSleepBadInputTests: BadInputTestCase {
    func testAsyncSleepUntilPastDeadlineReturnsAtOnce() async throws {
        let (scheduler, clock) = makeScheduler()
        for deadline in [Instant.min, clock.now() - .seconds(1), clock.now()] {
            let returned = try await withWatchdog {
                try await scheduler.sleep(until: deadline)
                return true
            }
            XCTAssertNotNil(returned, "\(deadline): returns without the virtual clock moving")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testAsyncSleepUntilSaturatedDeadlineSleepsUntilCancelled() async throws {
        let (scheduler, clock) = makeScheduler()
        let sleeper = Task { try await scheduler.sleep(until: .max) }
        XCTAssertTrue(waitUntil { scheduler.statistics.liveTimers == 1 }, "the sleep waits for \"never\"")
        await clock.advance(by: .seconds(Int64.max))  // to the end of (virtual) time: still asleep
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        await assertCancelThrowsCancellationError(sleeper)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        // Clock-generic code: now + a huge duration saturates at "never".
        let generic = Task { try await Task.sleep(for: .seconds(Int64.max), clock: PrecisionClock()) }
        try await Task.sleep(for: .milliseconds(20))
        await assertCancelThrowsCancellationError(generic)
    }

    func testAsyncSleepInACancelledTaskThrowsCancellationError() async throws {
        let (scheduler, clock) = makeScheduler()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await scheduler.sleep(until: clock.now() + .seconds(1))
        }
        do {
            try await task.value
            XCTFail("a cancelled task's sleep returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "nothing left behind")
    }
}
