import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import XCTest

/// Bad input to ``TimerScheduler/init(options:)`` and its ``TimerScheduler/Options``
/// (`Engine/TimerScheduler.swift`). `CONTRIBUTING.md` names these tests row by row against the
/// tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class SchedulerBadInputTests: BadInputTestCase {
    func testSchedulerRealtimePriorityOutOfRangeThrowsInvalidArgument() {
        for priority in [0, -1, 100, Int.max, Int.min] {
            assertThrows(.invalidArgument, try TimerScheduler(options: .init(priority: .realtime(priority))),
                         "\(priority)")
        }
    }

    func testSchedulerCPUOutOfRangeThrowsInvalidArgument() {
        for cpu in [-1, Int(cmc_cpu_count()), Int.max, Int.min] {
            assertThrows(.invalidArgument, try TimerScheduler(options: .init(cpu: cpu)), "CPU \(cpu)")
        }
    }

    func testSchedulerRealtimeRequestIsReportedAndTimersFireEitherWay() throws {
        let scheduler = try TimerScheduler(options: .init(priority: .realtime(1), name: "bad-input-rt"))
        switch scheduler.threadReport.realtime {
        case .granted(let priority):
            XCTAssertEqual(priority, 1)
        case .refused(let errno):
            XCTAssertNotEqual(errno.rawValue, 0)
        case .notRequested:
            XCTFail("the request was not recorded")
        }
        let fired = DispatchSemaphore(value: 0)
        let timer = scheduler.schedule(after: .milliseconds(1)) { _ in fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 10), .success, "granted or refused, the timer fires")
        withExtendedLifetime(timer) {}
    }

    func testSchedulerNegativeTimeSliceThrowsInvalidArgument() {
        var options = TimerScheduler.Options(name: "bad-input-slice")
        options.timeSlice = .nanoseconds(-1)
        assertThrows(.invalidArgument, try TimerScheduler(options: options))
    }

    func testSchedulerTimeSliceIsAskedForAndReported() throws {
        let kernelReportsSlices = ThreadControls.timeSlice() != nil
        let byDefault = try TimerScheduler(options: .init(name: "slice-default")).threadReport
        XCTAssertNil(byDefault.timeSliceError)
        var asked = TimerScheduler.Options(name: "slice-asked")
        asked.timeSlice = .microseconds(300)
        let custom = try TimerScheduler(options: asked).threadReport
        XCTAssertNil(custom.timeSliceError)
        var none = TimerScheduler.Options(name: "slice-none")
        none.timeSlice = nil
        let kept = try TimerScheduler(options: none).threadReport
        guard kernelReportsSlices else {
            XCTAssertNil(byDefault.timeSlice)
            throw XCTSkip("this kernel reports no time slice (before Linux 6.12)")
        }
        XCTAssertEqual(byDefault.timeSlice, .microseconds(100), "the default: the shortest the kernel allows")
        XCTAssertEqual(custom.timeSlice, .microseconds(300))
        XCTAssertEqual(kept.timeSlice, ThreadControls.timeSlice(), "nil: the slice the creating thread passed on")
    }

    func testSchedulerNameLongerThanFifteenBytesIsTruncated() throws {
        let scheduler = try TimerScheduler(options: .init(name: "abcdefghijklmnopqrstuvwxyz"))
        let name = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let timer = scheduler.schedule(after: .zero) { _ in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(cmc_thread_id())/comm", encoding: .utf8)
            name.append(comm ?? "unreadable")
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(name.all.first?.trimmingCharacters(in: .newlines), "abcdefghijklmno")
        withExtendedLifetime(timer) {}
    }
}
