import Dispatch
import Foundation
import PrecisionTimer
import Synchronization
import XCTest

/// FrameLink, the keyed task registry and the stopwatch.
final class TimerFamilyTests: XCTestCase {
    func testFrameLinkKeepsItsGridAndDropsFramesWhenTheCallbackOverruns() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { frame in
            frames.append(frame)
            if frame.index == 2 { clock.busy(for: .milliseconds(40)) }  // overrun by ~2.4 frames
        }
        // Frame k is due at start + k / 60 s, exactly, rounded once to the nanosecond.
        func offset(_ k: Int64) -> Duration { .nanoseconds((k * 2_000_000_000 + 60) / 120) }
        let start = clock.now() + offset(1)
        clock.advance(by: .milliseconds(120))
        let f = frames.all
        XCTAssertEqual(f.map(\.index), [0, 1, 2, 4, 5, 6])
        XCTAssertEqual(f.map(\.dropped), [0, 0, 0, 1, 0, 0])
        for frame in f {
            XCTAssertEqual(frame.timestamp, start + offset(Int64(frame.index)), "on the frame grid")
            XCTAssertEqual(frame.targetTimestamp, start + offset(Int64(frame.index + 1)), "the next frame's time")
            XCTAssertEqual(frame.duration, Duration(attoseconds: 16_666_666_666_666_667), "1/60 s to the attosecond")
            XCTAssertGreaterThanOrEqual(frame.firedAt, frame.timestamp)
        }
        link.isPaused = true
        link.isPaused = true
        let countWhilePaused = frames.count
        clock.advance(by: .milliseconds(100))
        XCTAssertEqual(frames.count, countWhilePaused)
        link.isPaused = false
        clock.advance(by: .zero)
        XCTAssertGreaterThan(frames.all.last!.dropped, 0, "frames missed while paused are reported dropped")
        link.setPreferredFramesPerSecond(30)
        XCTAssertEqual(link.preferredFramesPerSecond, 30)
        link.invalidate()
        XCTAssertTrue(link.isInvalidated)
        // A rate of 0 or a frameInterval of 0 is a precondition failure: PreconditionTrapTests.
        let divided = FrameLink(baseRate: 60, frameInterval: 2, scheduler: scheduler) { _ in }
        XCTAssertEqual(divided.preferredFramesPerSecond, 30)
    }

    func testFrameLinkWithAWeakOwnerStopsWhenTheOwnerDies() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        var owner: Owner? = Owner(flag: flag)
        let link = FrameLink(preferredFramesPerSecond: 100, owner: owner!, scheduler: scheduler) { owner, frame in
            owner.ticks.append(frame.index)
        }
        clock.advance(by: .milliseconds(25))
        owner = nil
        XCTAssertTrue(flag.isSet)
        clock.advance(by: .milliseconds(10))
        XCTAssertTrue(link.isInvalidated)
    }

    func testRegistryTasksFireOnTheRequestedQueueAndStopWhenCancelledByKey() throws {
        let registry = TaskRegistry()
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.registry")
        queue.setSpecific(key: key, value: "registry")
        let seen = Recorder<String?>()
        let repeating = registry.schedule("poll", after: .milliseconds(1), repeating: .milliseconds(2),
                                              on: .queue(queue)) {
            seen.append(DispatchQueue.getSpecific(key: key))
        }
        XCTAssertEqual(repeating, "poll")
        XCTAssertTrue(registry.contains("poll"))
        let deadline = Date().addingTimeInterval(10)
        while seen.count < 3 && Date() < deadline { usleep(1_000) }
        XCTAssertTrue(registry.cancel("poll"))
        XCTAssertFalse(registry.cancel("poll"))
        XCTAssertFalse(registry.contains("poll"))
        queue.sync {}
        let atCancel = seen.count
        usleep(20_000)
        XCTAssertEqual(seen.count, atCancel, "stopped when cancelled by key")
        XCTAssertGreaterThanOrEqual(atCancel, 3)
        XCTAssertTrue(seen.all.allSatisfy { $0 == "registry" })
    }

    func testRegistryOneShotsRemoveThemselvesAndReleaseTheirCaptures() throws {
        let clock = VirtualClock()
        let registry = TaskRegistry(scheduler: TimerScheduler(clock: clock))
        let flag = DeinitFlag()
        var captured: Owner? = Owner(flag: flag)
        let ran = Atomic<Int>(0)
        let key = registry.schedule(after: .milliseconds(5)) { [captured] in
            _ = captured
            ran.add(1, ordering: .relaxed)
        }
        captured = nil
        XCTAssertEqual(registry.count, 1)
        XCTAssertFalse(flag.isSet)
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(ran.load(ordering: .relaxed), 1)
        XCTAssertFalse(registry.contains(key))
        XCTAssertEqual(registry.count, 0)
        XCTAssertTrue(flag.isSet, "the registry holds a task's captures no longer than the task lives")
        // A one-shot due at once still leaves the registry.
        registry.schedule(after: .zero) {}
        clock.advance(by: .zero)
        XCTAssertEqual(registry.count, 0)
    }

    func testSchedulingUnderALiveKeyReplacesTheOldTask() throws {
        let clock = VirtualClock()
        let registry = TaskRegistry(scheduler: TimerScheduler(clock: clock))
        let log = Recorder<String>()
        registry.schedule("k", after: .milliseconds(10)) { log.append("old") }
        registry.schedule("k", after: .milliseconds(20)) { log.append("new") }
        XCTAssertEqual(registry.count, 1)
        clock.advance(by: .milliseconds(30))
        XCTAssertEqual(log.all, ["new"])
        registry.schedule("a", after: .seconds(1), repeating: .seconds(1)) {}
        registry.schedule("b", after: .seconds(1)) {}
        XCTAssertEqual(registry.count, 2)
        registry.cancelAll()
        XCTAssertEqual(registry.count, 0)
        // A zero interval is a precondition failure: PreconditionTrapTests.
    }

    func testStopwatchLapsAndElapsedNeverGoBack() {
        var watch = Stopwatch()
        let lap1 = watch.lap()
        usleep(2_000)
        let lap2 = watch.lap()
        XCTAssertGreaterThanOrEqual(lap1, .zero)
        XCTAssertGreaterThanOrEqual(lap2, .milliseconds(2))
        XCTAssertGreaterThanOrEqual(watch.elapsed, lap1 + lap2)
        watch.reset()
        XCTAssertLessThan(watch.elapsed, .seconds(1))
        let measured = PrecisionClock().measure { usleep(1_000) }
        XCTAssertGreaterThanOrEqual(measured, .milliseconds(1))
    }
}

final class RateMeterTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    func testRateAndIntervalStatisticsOverTheWindow() throws {
        var meter = RateMeter(window: .seconds(1))
        XCTAssertEqual(meter.statistics.rate, 0)
        // 1 kHz for two seconds, alternating 0.9 ms and 1.1 ms intervals.
        var t: Int64 = 10_000_000_000
        for i in 0..<2_000 {
            meter.record(at: Instant(nanoseconds: t))
            t += i % 2 == 0 ? 900_000 : 1_100_000
        }
        let s = meter.statistics
        XCTAssertEqual(s.count, 1_001, "only the last second is kept")
        XCTAssertEqual(s.rate, 1_000, accuracy: 0.5)
        XCTAssertEqual(s.minInterval, .microseconds(900))
        XCTAssertEqual(s.maxInterval, .microseconds(1_100))
        XCTAssertEqual(s.meanInterval, .microseconds(1_000))
        XCTAssertEqual(s.jitter, .microseconds(100))
        meter.reset()
        XCTAssertEqual(meter.statistics.count, 0)
    }

    func testBadWindowAndOutOfOrderEvents() throws {
        // A window that is not positive is a precondition failure: PreconditionTrapTests.
        var meter = RateMeter()
        meter.record(at: Instant(nanoseconds: 2_000_000))
        meter.record(at: Instant(nanoseconds: 1_000_000))  // earlier than the newest: clamped
        XCTAssertEqual(meter.statistics.minInterval, .zero)
        meter.record()  // now, on the meter's clock
        XCTAssertEqual(meter.statistics.count, 1, "the old stamps left the window")
    }
}
