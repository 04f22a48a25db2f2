@testable import PrecisionTimer
import Foundation
import XCTest

/// Reliability of ``FrameLink``'s rate changes.
final class FrameLinkReliabilityTests: XCTestCase {
    /// After a rate change, frames report the period they run at: each frame's
    /// `duration` is the new period and its `targetTimestamp` is the next
    /// frame's `timestamp`.
    func testFramesAfterARateChangeReportTheNewPeriod() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 50, scheduler: scheduler) { frames.append($0) }
        clock.advance(by: .milliseconds(20))  // frame 0 at 20 ms; frame 1 pending at 40 ms
        link.setPreferredFramesPerSecond(100)
        clock.advance(by: .milliseconds(30))  // frame 1 keeps its 40 ms, then every 10 ms: 50
        let all = frames.all
        let start = all.first?.timestamp.nanoseconds ?? 0
        XCTAssertEqual(all.map { $0.timestamp.nanoseconds - start }, [0, 20_000_000, 30_000_000])
        XCTAssertEqual(all.map(\.duration), [.milliseconds(20), .milliseconds(10), .milliseconds(10)],
                       "frames after the change run at 100 fps: their duration must say so")
        for (frame, next) in zip(all, all.dropFirst()) {
            XCTAssertEqual(frame.targetTimestamp, next.timestamp,
                           "frame \(frame.index)'s target is where the next frame came")
        }
        withExtendedLifetime(link) {}
    }

    /// The same through the `frameInterval` and `owner:` initializers.
    func testFramesAfterARateChangeReportTheNewPeriodForEveryInitializer() throws {
        let (scheduler, clock) = makeScheduler()
        let divided = Recorder<FrameLink.Frame>()
        let dividedLink = FrameLink(baseRate: 100, frameInterval: 2, scheduler: scheduler) { divided.append($0) }
        let owner = Owner(flag: DeinitFlag())
        let owned = Recorder<FrameLink.Frame>()
        let ownedLink = FrameLink(preferredFramesPerSecond: 50, owner: owner,
                                      scheduler: scheduler) { _, frame in owned.append(frame) }
        clock.advance(by: .milliseconds(20))
        dividedLink.setPreferredFramesPerSecond(100)
        ownedLink.setPreferredFramesPerSecond(100)
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(divided.all.map(\.duration), [.milliseconds(20), .milliseconds(10), .milliseconds(10)])
        XCTAssertEqual(owned.all.map(\.duration), [.milliseconds(20), .milliseconds(10), .milliseconds(10)])
        withExtendedLifetime((dividedLink, ownedLink, owner)) {}
    }

    /// Two threads setting different rates at once: when both are done, the rate
    /// the link reports is the one it runs at.
    func testConcurrentRateChangesLeaveTheRateAndTheIntervalInAgreement() throws {
        let (scheduler, _) = makeScheduler()
        let link = FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { _ in }
        let rates = [30, 60]
        var disagreements: [String] = []
        let end = ContinuousClock.now + .seconds(2)
        var rounds = 0
        while ContinuousClock.now < end && disagreements.count < 5 {
            DispatchQueue.concurrentPerform(iterations: rates.count) { i in
                link.setPreferredFramesPerSecond(rates[i])
            }
            rounds += 1
            let fps = link.preferredFramesPerSecond
            let interval = link.timer.interval
            let expected = TimerInterval.period(ticks: fps, per: .seconds(1), #function).duration
            if interval != expected {
                disagreements.append("round \(rounds): \(fps) fps but the timer runs every \(interval)")
            }
        }
        XCTAssertEqual(disagreements, [], "after \(rounds) rounds")
        XCTAssertGreaterThan(rounds, 100)
    }
}
