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

    func testSetTimeSliceNegativeThrowsZeroRestoresOutOfRangeIsClampedRealtimeRefuses() throws {
        // On a thread of its own: the test runner's thread keeps its slice.
        let readings = try XCTUnwrap(runOffTheTestThread(timeout: 10) { () -> [String: String] in
            var r: [String: String] = [:]
            r["default"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            do { try ThreadControls.setTimeSlice(.nanoseconds(-1)) } catch { r["negative"] = "\(error)" }
            r["after negative"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            try? ThreadControls.setTimeSlice(.microseconds(250))
            r["250 µs"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            try? ThreadControls.setTimeSlice(.nanoseconds(1))
            r["1 ns"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            try? ThreadControls.setTimeSlice(.seconds(5))
            r["5 s"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            try? ThreadControls.setTimeSlice(.zero)
            r["zero"] = "\(ThreadControls.timeSlice().map { "\($0)" } ?? "none")"
            if (try? ThreadControls.requestRealtime(priority: 1)) != nil {
                do { try ThreadControls.setTimeSlice(.microseconds(200)) } catch { r["realtime"] = "\(error)" }
                try? ThreadControls.dropRealtime()
            }
            return r
        })
        XCTAssertEqual(readings["negative"],
                       "\(PrecisionTimerError.invalidArgument("the time slice must not be negative (got \(Duration.nanoseconds(-1)))"))")
        XCTAssertEqual(readings["after negative"], readings["default"], "nothing changed")
        if let realtime = readings["realtime"] {
            XCTAssertEqual(realtime, "\(PrecisionTimerError.system(.invalidArgument, operation: "sched_setattr"))")
        }
        guard readings["default"] != "none" else {
            throw XCTSkip("this kernel reports no time slice (before Linux 6.12): the rest cannot be read back")
        }
        XCTAssertEqual(readings["250 µs"], "\(Duration.microseconds(250))")
        XCTAssertEqual(readings["1 ns"], "\(Duration.microseconds(100))", "clamped to the kernel's 0.1 ms")
        XCTAssertEqual(readings["5 s"], "\(Duration.milliseconds(100))", "clamped to the kernel's 100 ms")
        XCTAssertEqual(readings["zero"], readings["default"], "zero restores the kernel's default")
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
