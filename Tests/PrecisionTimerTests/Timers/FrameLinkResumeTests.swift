@testable import PrecisionTimer
import XCTest

/// ``FrameLink/Frame/isFirstAfterResume``, on virtual time.
final class FrameLinkResumeTests: XCTestCase {
    private func summary(_ frames: [FrameLink.Frame]) -> [String] {
        frames.map { "\($0.index)\($0.isFirstAfterResume ? " first after resume" : ""), dropped \($0.dropped)" }
    }

    func testTheFirstFrameAfterAResumeIsFlaggedAndOnlyIt() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { frames.append($0) }
        clock.advance(by: .milliseconds(20))  // frames 0 and 1, at 10 and 20 ms
        link.isPaused = true
        clock.advance(by: .milliseconds(35))  // frames 2 ... 4 (30 ... 50 ms) fall due while paused
        link.isPaused = false  // at 55 ms: frame 4 comes at once, 2 and 3 dropped
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(summary(frames.all), [
            "0, dropped 0", "1, dropped 0",
            "4 first after resume, dropped 2",
            "5, dropped 0", "6, dropped 0", "7, dropped 0",
        ])
        withExtendedLifetime(link) {}
    }

    func testTheVeryFirstFrameIsNotFlaggedUnlessAPauseCameBeforeIt() throws {
        let (scheduler, clock) = makeScheduler()
        let plain = Recorder<FrameLink.Frame>()
        let paused = Recorder<FrameLink.Frame>()
        let plainLink = FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { plain.append($0) }
        let pausedLink = FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { paused.append($0) }
        pausedLink.isPaused = true
        pausedLink.isPaused = false
        clock.advance(by: .milliseconds(20))
        XCTAssertEqual(plain.all.map(\.isFirstAfterResume), [false, false])
        XCTAssertEqual(paused.all.map(\.isFirstAfterResume), [true, false])
        withExtendedLifetime((plainLink, pausedLink)) {}
    }

    func testRedundantPausesAndResumesMakeOneFlaggedFrameOrNone() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 100, scheduler: scheduler) { frames.append($0) }
        clock.advance(by: .milliseconds(10))
        link.isPaused = false  // not paused: not a resume
        clock.advance(by: .milliseconds(10))
        link.isPaused = true
        link.isPaused = true
        link.isPaused = false
        link.isPaused = true
        link.isPaused = false
        link.isPaused = false
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(frames.all.map(\.isFirstAfterResume), [false, false, true, false, false])
        withExtendedLifetime(link) {}
    }

    func testEveryInitializerFlagsTheFrameAfterAResume() throws {
        let (scheduler, clock) = makeScheduler()
        let rational = Recorder<FrameLink.Frame>()
        let divided = Recorder<FrameLink.Frame>()
        let owned = Recorder<FrameLink.Frame>()
        let owner = Owner(flag: DeinitFlag())
        let links = [
            FrameLink(frames: 100, per: .seconds(1), scheduler: scheduler) { rational.append($0) },
            FrameLink(baseRate: 200, frameInterval: 2, scheduler: scheduler) { divided.append($0) },
            FrameLink(preferredFramesPerSecond: 100, owner: owner, scheduler: scheduler) { _, f in owned.append(f) },
        ]
        clock.advance(by: .milliseconds(10))  // frame 0
        for link in links { link.isPaused = true }
        clock.advance(by: .milliseconds(25))  // frames 1 and 2 due while paused
        for link in links { link.isPaused = false }  // frame 2 at once, 1 dropped
        clock.advance(by: .milliseconds(20))  // frames 3 and 4
        for recorder in [rational, divided, owned] {
            XCTAssertEqual(recorder.all.map(\.isFirstAfterResume), [false, true, false, false])
            XCTAssertEqual(recorder.all.map(\.dropped), [0, 1, 0, 0])
        }
        withExtendedLifetime((links, owner)) {}
    }
}
