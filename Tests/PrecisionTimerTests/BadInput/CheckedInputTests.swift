@testable import PrecisionTimer
import XCTest

/// The rule of *Bad input*: a call that throws reports every bad argument by
/// throwing; values from outside the program go through ``TimerInterval``; a
/// negative leeway or tolerance is zero. (The calls that trap are listed, with
/// their messages, by the precondition probe.)
final class CheckedInputTests: XCTestCase {
    let raw = PrecisionClock(.monotonicRaw)

    func assertInvalidArgument(_ message: String, file: StaticString = #filePath, line: UInt = #line,
                               _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .invalidArgument(message), file: file, line: line)
        }
    }

    func assertUnsupportedClock(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .unsupportedClock(.monotonicRaw), file: file, line: line)
        }
    }

    // MARK: - TimerInterval, the way in for values from outside

    func testTimerIntervalThrowsNamingTheValue() {
        assertInvalidArgument("the interval must be positive (got \(Duration.zero))") { _ = try TimerInterval(.zero) }
        assertInvalidArgument("the interval must be positive (got \(Duration.milliseconds(-5)))") {
            _ = try TimerInterval(.milliseconds(-5))
        }
        assertInvalidArgument("interval must be a finite number of seconds (got nan)") {
            _ = try TimerInterval(seconds: .nan)
        }
        assertInvalidArgument("interval must be a finite number of seconds (got inf)") {
            _ = try TimerInterval(seconds: .infinity)
        }
        assertInvalidArgument("the interval must be positive (got \(Duration.zero))") { _ = try TimerInterval(seconds: 0) }
        assertInvalidArgument("ticks must be in 1...9223372036 (got 0)") { _ = try TimerInterval(ticks: 0, per: .seconds(1)) }
        assertInvalidArgument("ticks must be in 1...9223372036 (got 9223372037)") {
            _ = try TimerInterval(ticks: 9_223_372_037, per: .seconds(1))
        }
        assertInvalidArgument("the span must be positive (got \(Duration.zero))") { _ = try TimerInterval(ticks: 60, per: .zero) }
    }

    func testTimerIntervalKeepsTheExactPeriod() throws {
        XCTAssertEqual(try TimerInterval(.milliseconds(10)).duration, .milliseconds(10))
        XCTAssertEqual(try TimerInterval(seconds: 0.25).duration, .milliseconds(250))
        XCTAssertEqual(try TimerInterval(ticks: 48, per: .seconds(1)).duration, .seconds(1) / 48)
        XCTAssertNotEqual(try TimerInterval(.seconds(1) / 48), try TimerInterval(ticks: 48, per: .seconds(1)),
                          "a Duration keeps its attoseconds; a rate is exact")
        XCTAssertEqual(try TimerInterval(.nanoseconds(1)).duration, .nanoseconds(1))
        XCTAssertEqual(try TimerInterval(Duration(attoseconds: 1)).duration, .nanoseconds(1), "under 1 ns is 1 ns")
    }

    func testEveryIntervalTakingCallAcceptsACheckedInterval() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let interval = try TimerInterval(ticks: 3, per: .seconds(1))
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: interval) { ticks.append($0) }
        final class Box: Sendable {}
        let owned = Recorder<Int>()
        let box = Box()
        let ownerTimer = scheduler.repeating(every: interval, owner: box) { _, tick in owned.append(tick.index) }
        clock.advance(by: .seconds(1))
        // Tick 0 is one period from now; tick k is k exact periods after it.
        XCTAssertEqual(ticks.all.map(\.deadline.nanoseconds), [333_333_333, 666_666_666, 1_000_000_000].map {
            start.nanoseconds + $0
        })
        XCTAssertEqual(owned.all, [0, 1, 2])
        timer.setInterval(try TimerInterval(.seconds(2)))
        XCTAssertEqual(timer.interval, .seconds(2))
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        registry.schedule("poll", after: .zero, repeating: try TimerInterval(seconds: 0.5)) { runs.append(1) }
        clock.advance(by: .seconds(1))
        XCTAssertEqual(runs.count, 3, "at 0, 0.5 and 1 s")
        let sequence = scheduler.ticks(every: interval)
        XCTAssertEqual(sequence.timer.interval, interval.duration)
        withExtendedLifetime((ownerTimer, box)) {}
    }

    func testATickCanSetACheckedIntervalAndAnExactRate() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .seconds(1)) { tick in
            ticks.append(tick)
            if tick.index == 0 { tick.setRate(ticks: 3, per: .seconds(1)) }
            if tick.index == 3 { tick.setInterval(try! TimerInterval(.seconds(2))) }
        }
        clock.advance(by: .seconds(5))
        // Tick 0 at 1 s; ticks 1–3 a third of a second apart; then every 2 s.
        XCTAssertEqual(ticks.all.map { $0.deadline.nanoseconds - start.nanoseconds },
                       [1_000_000_000, 1_333_333_333, 1_666_666_667, 2_000_000_000, 4_000_000_000])
        XCTAssertEqual(timer.interval, .seconds(2))
    }

    // MARK: - A call that throws never traps

    func testThrowingFactoriesThrowForEveryBadArgument() {
        let (scheduler, _) = makeScheduler()
        final class Box: Sendable {}
        assertInvalidArgument("the interval must be positive (got \(Duration.zero))") {
            _ = try scheduler.repeating(every: .zero, startingAt: .max) { _ in }
        }
        assertInvalidArgument("the interval must be positive (got \(Duration.seconds(-1)))") {
            _ = try scheduler.repeating(every: .seconds(-1), startingAt: .max, owner: Box()) { _, _ in }
        }
        assertInvalidArgument("ticks must be in 1...9223372036 (got 0)") {
            _ = try scheduler.repeating(ticks: 0, per: .seconds(1), startingAt: .max) { _ in }
        }
        assertInvalidArgument("the span must be positive (got \(Duration.zero))") {
            _ = try scheduler.repeating(ticks: 60, per: .zero, startingAt: .max) { _ in }
        }
        assertInvalidArgument("the interval must be positive (got \(Duration.seconds(-1)))") {
            _ = try scheduler.ticks(every: .seconds(-1), startingAt: .max)
        }
        assertInvalidArgument("buffering must keep at least one tick (got 0)") {
            _ = try scheduler.ticks(every: .seconds(1), startingAt: .max, buffering: .newest(0))
        }
        assertUnsupportedClock { _ = try scheduler.repeating(every: .seconds(1), startingAt: .max, clock: raw) { _ in } }
        assertUnsupportedClock { _ = try scheduler.ticks(every: .seconds(1), startingAt: .max, clock: raw) }
    }

    func testBlockingWaitsAndTheSlackThrowForEveryBadArgument() {
        assertUnsupportedClock { _ = try raw.wait(until: .min, strategy: .sleep) }
        assertUnsupportedClock { _ = try raw.wait(for: .zero, strategy: .adaptive) }
        XCTAssertNoThrow(try raw.wait(until: raw.now, strategy: .spin), "spinning works on the raw clock")
        assertInvalidArgument("the hybrid margin must not be negative (got \(Duration.nanoseconds(-1)))") {
            _ = try PrecisionClock.monotonic.wait(for: .zero, strategy: .hybrid(margin: .nanoseconds(-1)))
        }
        assertInvalidArgument("the timer slack must not be negative (got \(Duration.nanoseconds(-1)))") {
            try ThreadControls.setTimerSlack(.nanoseconds(-1))
        }
    }

    func testAsyncWaitsThrowOnTheRawClock() async {
        let (scheduler, _) = makeScheduler()
        do {
            try await raw.sleep(until: .max)
            XCTFail("returned")
        } catch {
            XCTAssertEqual(error as? PrecisionTimerError, .unsupportedClock(.monotonicRaw))
        }
        do {
            try await scheduler.sleep(until: .min, on: raw)
            XCTFail("returned")
        } catch {
            XCTAssertEqual(error as? PrecisionTimerError, .unsupportedClock(.monotonicRaw))
        }
        do {
            _ = try await raw.withTimeout(until: .max) { 1 }
            XCTFail("returned")
        } catch {
            XCTAssertEqual(error as? PrecisionTimerError, .unsupportedClock(.monotonicRaw))
        }
    }

    // MARK: - A negative leeway or tolerance is zero

    func testANegativeLeewayIsZero() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let fired = Recorder<Tick>()
        let oneShot = scheduler.schedule(after: .seconds(1), leeway: .milliseconds(-5)) { fired.append($0) }
        let repeating = scheduler.repeating(every: .seconds(1), leeway: .seconds(-1)) { fired.append($0) }
        XCTAssertEqual(repeating.leeway, .zero)
        clock.advance(by: .seconds(1) - .nanoseconds(1))
        XCTAssertEqual(fired.count, 0, "never early")
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(fired.all.map(\.firedAt), [start + .seconds(1), start + .seconds(1)])
        withExtendedLifetime((oneShot, repeating)) {}
    }

    /// A sleep's timer with a negative leeway trips the engine's invariant
    /// check (debug builds) when it is started.
    func testANegativeToleranceIsZero() async throws {
        let clock = VirtualClock()
        try await clock.sleep(until: clock.now, tolerance: .seconds(-1))
        let scheduler = try TimerScheduler()
        let deadline = PrecisionClock.monotonic.now + .milliseconds(2)
        try await scheduler.sleep(until: deadline, tolerance: .nanoseconds(-1))
        XCTAssertGreaterThanOrEqual(PrecisionClock.monotonic.now, deadline, "never early")
        let result = try await PrecisionClock.monotonic.withTimeout(until: PrecisionClock.monotonic.now + .milliseconds(1),
                                                                    tolerance: .seconds(-1)) { 7 }
        if case .completed(let value) = result { XCTAssertEqual(value, 7) }
    }

    // MARK: - FrameLink's rate

    func testAFrameLinkReportsTheExactRateItRunsAt() throws {
        let (scheduler, _) = makeScheduler()
        let ntsc = FrameLink(frames: 60_000, per: .seconds(1_001), scheduler: scheduler) { _ in }
        XCTAssertEqual(ntsc.rate.frames, 60_000)
        XCTAssertEqual(ntsc.rate.span, .seconds(1_001))
        XCTAssertEqual(ntsc.rate.framesPerSecond, 60_000.0 / 1_001.0, accuracy: 1e-12)
        XCTAssertEqual(ntsc.preferredFramesPerSecond, 60)
        let sixty = FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler) { _ in }
        XCTAssertEqual(sixty.rate.framesPerSecond, 60)
        sixty.setPreferredFramesPerSecond(24)
        XCTAssertEqual(sixty.rate.frames, 24)
        XCTAssertEqual(sixty.rate.span, .seconds(1))
        sixty.setFrameInterval(try TimerInterval(ticks: 30, per: .seconds(1)))
        XCTAssertEqual(sixty.rate.framesPerSecond, 30, accuracy: 1e-9)
        XCTAssertEqual(sixty.preferredFramesPerSecond, 30)
        XCTAssertEqual(sixty.timer.interval, .seconds(1) / 30)
        let checked = FrameLink(every: try TimerInterval(ticks: 60_000, per: .seconds(1_001)), scheduler: scheduler) { _ in }
        XCTAssertEqual(checked.rate.framesPerSecond, 60_000.0 / 1_001.0, accuracy: 1e-12)
        XCTAssertEqual(checked.rate.frameDuration, ntsc.rate.frameDuration)
        XCTAssertEqual(checked.preferredFramesPerSecond, 60)
    }

    /// A span so short that a frame would last under 1 ns is clamped to one
    /// frame per nanosecond, as documented, not a runtime overflow.
    func testATinySpanIsClampedToOneFramePerNanosecond() {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(frames: 10, per: Duration(attoseconds: 1), scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(link.rate.frames, 1)
        XCTAssertEqual(link.rate.span, .nanoseconds(1))
        XCTAssertEqual(link.preferredFramesPerSecond, 1_000_000_000)
        let computed = FrameLink(frames: 10, per: .seconds(1) / 1_000_000_000_000, scheduler: scheduler) { _ in }
        XCTAssertEqual(computed.rate.span, .nanoseconds(1))
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(frames.all.map(\.duration), [.nanoseconds(1)])
        withExtendedLifetime(computed) {}
    }

    // MARK: - The registry's in-place reschedule

    func testTheRegistryReschedulesAKeyInPlace() {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now(.monotonic)
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<PrecisionClock.Instant>()
        registry.schedule("idle", after: .seconds(60)) { runs.append(clock.now(.monotonic)) }
        let before = TimerNode.instancesIfCounted
        for k in 1...30 {
            clock.advance(by: .seconds(10))
            XCTAssertTrue(registry.reschedule("idle", after: .seconds(60)), "read \(k) pushes the timeout back")
        }
        XCTAssertEqual(TimerNode.instancesIfCounted, before, "no new timer per reschedule")
        XCTAssertEqual(runs.count, 0)
        clock.advance(by: .seconds(60))
        XCTAssertEqual(runs.all, [start + .seconds(360)])
        XCTAssertFalse(registry.contains("idle"))
        XCTAssertFalse(registry.reschedule("idle", after: .seconds(1)), "a one-shot that ran is gone")
        XCTAssertFalse(registry.reschedule("unknown", after: .seconds(1)))
        let ticks = Recorder<PrecisionClock.Instant>()
        registry.schedule("poll", after: .seconds(1), repeating: .seconds(1)) { ticks.append(clock.now(.monotonic)) }
        XCTAssertTrue(registry.reschedule("poll", after: .seconds(5)))
        clock.advance(by: .seconds(6))
        XCTAssertEqual(ticks.all, [start + .seconds(365), start + .seconds(366)])
    }
}

extension TimerNode {
    /// Timer nodes alive (debug builds), or 0 where they are not counted.
    static var instancesIfCounted: Int {
        #if DEBUG
        instances.load(ordering: .relaxed)
        #else
        0
        #endif
    }
}
