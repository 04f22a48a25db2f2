import PrecisionTimer
import Synchronization
import XCTest

/// The README's usage example, compiled and run so it stays true.
final class ReadmeExampleTests: XCTestCase {
    func testReadmeExample() async throws {
        // --- README example begins ---
        let clock = PrecisionClock()                      // CLOCK_MONOTONIC
        let t0 = clock.now                                // one vDSO read

        // Block this thread until an absolute deadline: sleeps, then spins the
        // last few microseconds (the margin is learned on this machine).
        let result = try clock.wait(until: t0 + .milliseconds(2))
        print("woke \(result.lateness.readable) late")    // "woke 20 ns late"; never early

        // A drift-free 1 kHz timer on the shared scheduler thread.
        let timer = TimerScheduler.shared.repeating(every: .milliseconds(1)) { tick in
            if tick.missed > 0 { print("missed \(tick.missed) ticks") }
            if tick.index >= 99 { tick.cancelTimer() }    // or release `timer`
        }

        // Clock-generic async code runs on it too, without blocking a thread.
        try await clock.sleep(until: clock.now + .milliseconds(150))
        // --- README example ends ---
        // 100 ticks take 100 ms; allow a slow machine (or a sanitizer) far more.
        let end = ContinuousClock.now + .seconds(30)
        while !timer.isCancelled && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertTrue(timer.isCancelled)
        XCTAssertGreaterThanOrEqual(result.woke, t0 + .milliseconds(2))
    }
}
