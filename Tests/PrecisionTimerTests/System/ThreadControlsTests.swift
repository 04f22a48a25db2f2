import PrecisionTimer
import XCTest

final class ThreadControlsTests: XCTestCase {
    func testTimerSlackRoundTripAndBadInput() throws {
        let original = ThreadControls.timerSlack()
        try ThreadControls.setTimerSlack(.microseconds(7))
        XCTAssertEqual(ThreadControls.timerSlack(), .microseconds(7))
        try ThreadControls.setTimerSlack(original)
        // A negative slack is a precondition failure: PreconditionTrapTests.
    }

    func testRealtimePriorityOutOfRangeIsAnError() {
        XCTAssertEqual(ThreadControls.realtimePriorityRange, 1...99)
        XCTAssertThrowsError(try ThreadControls.requestRealtime(priority: 0)) { error in
            guard case .invalidArgument = error as? PrecisionTimerError else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(ThreadControls.isRealtime)
    }

    func testRealtimeRefusedByTheKernelIsASystemError() throws {
        // Not injected: the kernel refuses (no CAP_SYS_NICE, RLIMIT_RTPRIO 0).
        let (refusal, stillNormal) = try withRealtimeRefusedByTheKernel { () -> (PrecisionTimerError?, Bool) in
            var caught: PrecisionTimerError?
            do {
                try ThreadControls.requestRealtime(priority: 10)
            } catch {
                caught = error as? PrecisionTimerError
            }
            return (caught, !ThreadControls.isRealtime)
        }
        let error = try XCTUnwrap(refusal, "SCHED_FIFO was granted, or the error was not a PrecisionTimerError")
        XCTAssertEqual(error, .system(.notPermitted, operation: "pthread_setschedparam(SCHED_FIFO)"))
        XCTAssertTrue("\(error)".contains("Operation not permitted"), "\(error)")
        XCTAssertTrue(stillNormal)
    }

    func testPinningValidatesTheCPU() throws {
        XCTAssertThrowsError(try ThreadControls.pin(toCPU: -1))
        XCTAssertThrowsError(try ThreadControls.pin(toCPU: 1 << 20))
        try ThreadControls.pin(toCPU: 0)
        try ThreadControls.unpin()
    }
}
