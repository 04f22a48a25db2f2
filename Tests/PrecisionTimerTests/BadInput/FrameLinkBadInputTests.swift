@testable import PrecisionTimer
import XCTest

/// Bad input to ``FrameLink`` (`Timers/FrameLink.swift`). `CONTRIBUTING.md` names these tests row
/// by row against the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in
/// `BadInputSupport.swift`.
final class FrameLinkBadInputTests: BadInputTestCase {

    func testFrameLinkPeriodPastTheRangeMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let fastest = FrameLink(preferredFramesPerSecond: 1_000_000, scheduler: scheduler) { _ in }
        XCTAssertEqual(fastest.timer.interval, .microseconds(1), "the largest rate is accepted")
        fastest.invalidate()
        // A period past the clock's range: the first frame is due a period after
        // the start, so no frame ever comes.
        let frames = Recorder<FrameLink.Frame>()
        let never = FrameLink(frameInterval: Int.max, scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(never.timer.nextDeadline, .max)
        clock.advance(by: .seconds(1_000_000_000))
        XCTAssertEqual(frames.all.count, 0)
        never.invalidate()
    }

    func testFrameLinkFrameIntervalAboveTheBaseRateReportsOneFramePerSecond() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(baseRate: 60, frameInterval: 120, scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(link.preferredFramesPerSecond, 1, "60 / 120 rounds down to 0: reported as 1")
        let period = Duration.seconds(2)  // 120 base periods exactly: 0.5 fps
        clock.advance(by: period)
        XCTAssertEqual(frames.all.map(\.duration), [period])
    }

    func testFrameLinkRateChangeAfterInvalidateIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { frames.append($0) }
        link.invalidate()
        link.setPreferredFramesPerSecond(30)
        XCTAssertEqual(link.preferredFramesPerSecond, 60, "the rate the link last ran at")
        clock.advance(by: .seconds(1))
        XCTAssertEqual(frames.count, 0)
    }

    func testFrameLinkInvalidateTwiceAndPauseAfterInvalidateAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { frames.append($0) }
        link.invalidate()
        link.invalidate()
        XCTAssertTrue(link.isInvalidated)
        link.isPaused = true
        XCTAssertFalse(link.isPaused)
        link.isPaused = false
        XCTAssertTrue(link.isInvalidated)
        clock.advance(by: .seconds(1))
        XCTAssertEqual(frames.count, 0)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFrameLinkPauseAndResumeTwiceAreIdempotent() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { frames.append($0) }
        link.isPaused = true
        link.isPaused = true
        XCTAssertTrue(link.isPaused)
        clock.advance(by: .milliseconds(35))
        XCTAssertEqual(frames.count, 0)
        link.isPaused = false
        link.isPaused = false
        XCTAssertFalse(link.isPaused)
        clock.advance(by: .milliseconds(25))
        XCTAssertEqual(frames.all.map(\.index), [2, 3, 4, 5], "one callback per frame: resumed once")
        XCTAssertEqual(frames.all.map(\.dropped), [2, 0, 0, 0], "frames missed while paused are dropped")
    }
}
