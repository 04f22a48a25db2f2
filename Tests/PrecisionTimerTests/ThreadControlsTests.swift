import CMonoClock
import PrecisionTimer
import XCTest

final class ThreadControlsTests: XCTestCase {
    func testTimerSlackRoundTripAndBadInput() throws {
        let original = try ThreadControls.timerSlack()
        try ThreadControls.setTimerSlack(.microseconds(7))
        XCTAssertEqual(try ThreadControls.timerSlack(), .microseconds(7))
        try ThreadControls.setTimerSlack(original)
        XCTAssertThrowsError(try ThreadControls.setTimerSlack(.microseconds(-1))) { error in
            guard case .invalidArgument = error as? PrecisionTimerError else { return XCTFail("\(error)") }
        }
    }

    func testRealtimePriorityOutOfRangeIsAnErrorAndRefusalIsReported() {
        XCTAssertEqual(ThreadControls.realtimePriorityRange, 1...99)
        XCTAssertThrowsError(try ThreadControls.requestRealtime(priority: 0)) { error in
            guard case .invalidArgument = error as? PrecisionTimerError else { return XCTFail("\(error)") }
        }
        cmc_realtime_inject_error(EPERM)
        defer { cmc_realtime_inject_error(0) }
        XCTAssertThrowsError(try ThreadControls.requestRealtime(priority: 10)) { error in
            XCTAssertEqual(error as? PrecisionTimerError,
                           .system(PrecisionTimerError.Errno(rawValue: EPERM), operation: "pthread_setschedparam(SCHED_FIFO)"))
            XCTAssertTrue("\(error)".contains("Operation not permitted"), "\(error)")
        }
        XCTAssertFalse(ThreadControls.isRealtime)
    }

    func testPinningValidatesTheCPU() throws {
        XCTAssertThrowsError(try ThreadControls.pin(toCPU: -1))
        XCTAssertThrowsError(try ThreadControls.pin(toCPU: 1 << 20))
        try ThreadControls.pin(toCPU: 0)
        try ThreadControls.unpin()
    }
}
