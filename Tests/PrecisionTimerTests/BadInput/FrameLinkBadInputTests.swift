@testable import PrecisionTimer
import XCTest

/// Bad input to ``FrameLink`` (`Timers/FrameLink.swift`). The tables of
/// `PrecisionTimer.docc/BadInput.md` cite these tests by name; the helpers are in
/// `BadInputSupport.swift`.
final class FrameLinkBadInputTests: BadInputTestCase {
    func testFrameLinkRateOutOfRangeThrowsInvalidArgument() {
        let (scheduler, _) = makeScheduler()
        let owner = Owner(flag: DeinitFlag())
        for fps in [0, -1, -60, 1_000_001, Int.max, Int.min] {
            assertThrows(.invalidArgument, try FrameLink(preferredFramesPerSecond: fps, scheduler: scheduler) { _ in },
                         "\(fps)")
            assertThrows(.invalidArgument, try FrameLink(preferredFramesPerSecond: fps, owner: owner,
                                                         scheduler: scheduler) { _, _ in })
        }
        XCTAssertNoThrow(try FrameLink(preferredFramesPerSecond: 1_000_000, scheduler: scheduler) { _ in })
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFrameLinkFrameIntervalOrBaseRateOutOfRangeThrows() throws {
        let (scheduler, _) = makeScheduler()
        for frameInterval in [0, -1, Int.min] {
            assertThrows(.invalidArgument, try FrameLink(frameInterval: frameInterval, scheduler: scheduler) { _ in },
                         "frameInterval \(frameInterval)")
        }
        for baseRate in [0, -1, 1_000_001, Int.max] {
            assertThrows(.invalidArgument,
                         try FrameLink(baseRate: baseRate, frameInterval: 1, scheduler: scheduler) { _ in },
                         "baseRate \(baseRate)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        // A period past the clock's range: the first frame comes, the next never.
        let never = try FrameLink(frameInterval: Int.max, scheduler: scheduler) { _ in }
        XCTAssertEqual(never.timer.nextDeadline, .max)
        never.invalidate()
    }

    func testFrameLinkFrameIntervalAboveTheBaseRateReportsOneFramePerSecond() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = try FrameLink(baseRate: 60, frameInterval: 120, scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(link.preferredFramesPerSecond, 1, "60 / 120 rounds down to 0: reported as 1")
        let period = Duration.seconds(2)  // 120 base periods exactly: 0.5 fps
        clock.advance(by: period)
        XCTAssertEqual(frames.all.map(\.duration), [period])
    }

    func testFrameLinkSetRateOutOfRangeThrowsAndKeepsTheRate() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = try FrameLink(preferredFramesPerSecond: 50, scheduler: scheduler) { frames.append($0) }
        for fps in [0, -1, 1_000_001, Int.max] {
            assertThrows(.invalidArgument, try link.setPreferredFramesPerSecond(fps), "\(fps)")
        }
        XCTAssertEqual(link.preferredFramesPerSecond, 50)
        clock.advance(by: .milliseconds(40))
        XCTAssertEqual(frames.all.map(\.duration), [.milliseconds(20), .milliseconds(20)], "still 50 fps")
    }

    func testFrameLinkRateChangeAfterInvalidateIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = try FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { frames.append($0) }
        link.invalidate()
        try link.setPreferredFramesPerSecond(30)
        XCTAssertEqual(link.preferredFramesPerSecond, 60, "the rate the link last ran at")
        assertThrows(.invalidArgument, try link.setPreferredFramesPerSecond(0), "a bad rate still throws")
        clock.advance(by: .seconds(1))
        XCTAssertEqual(frames.count, 0)
    }

    func testFrameLinkInvalidateTwiceAndPauseAfterInvalidateAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = try FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { frames.append($0) }
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
        let link = try FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { frames.append($0) }
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
