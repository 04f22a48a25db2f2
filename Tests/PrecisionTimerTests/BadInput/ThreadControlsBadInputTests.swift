import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import XCTest

/// Bad input to ``ThreadControls`` (`System/ThreadControls.swift`). `CONTRIBUTING.md` names these
/// tests row by row against the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in
/// `BadInputSupport.swift`.
final class ThreadControlsBadInputTests: BadInputTestCase {
    func testSetTimerSlackZeroRestoresHugeIsClamped() throws {
        let before = ThreadControls.timerSlack()
        defer { try? ThreadControls.setTimerSlack(before) }
        for slack in [Duration.seconds(10)] + overflowing {
            try ThreadControls.setTimerSlack(slack)
            XCTAssertEqual(ThreadControls.timerSlack(), .nanoseconds(Int32.max), "\(slack) is clamped")
        }
        try ThreadControls.setTimerSlack(.microseconds(5))
        XCTAssertEqual(ThreadControls.timerSlack(), .microseconds(5))
        try ThreadControls.setTimerSlack(.zero)
        let restored = ThreadControls.timerSlack()
        XCTAssertNotEqual(restored, .microseconds(5), "zero restores the thread's default")
        XCTAssertGreaterThan(restored, .zero)
    }

    func testRequestRealtimeOutOfRangeThrowsInvalidArgument() {
        let wasRealtime = ThreadControls.isRealtime
        for priority in [0, -1, 100, Int.max, Int.min] {
            assertThrows(.invalidArgument, try ThreadControls.requestRealtime(priority: priority), "\(priority)")
        }
        XCTAssertEqual(ThreadControls.isRealtime, wasRealtime, "nothing changed")
    }

    func testPinToCPUOutOfRangeThrowsInvalidArgument() {
        for cpu in [-1, Int(cmc_cpu_count()), Int.max, Int.min] {
            assertThrows(.invalidArgument, try ThreadControls.pin(toCPU: cpu), "CPU \(cpu)")
        }
    }

    func testUndoingWhatWasNotDoneIsANoOp() throws {
        // On a helper thread, so the test runner's own thread is left as it was.
        let outcome = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try ThreadControls.dropRealtime()
                try ThreadControls.dropRealtime()
                try ThreadControls.unpin()
                try ThreadControls.unpin()
                try ThreadControls.unlockMemory()
                outcome.append(ThreadControls.isRealtime ? "still realtime" : "ok")
            } catch {
                outcome.append("\(error)")
            }
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(outcome.all, ["ok"])
    }
}
