import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import XCTest

/// Every public entry point against its bad inputs: one test per row of the
/// table in `PrecisionTimer.docc/BadInput.md` (the test names are its last
/// column). Timing goes through virtual time, so every assertion is exact; the
/// few tests on real threads only wait, with generous limits, for something to
/// happen at all.
final class BadInputTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    // MARK: - Support

    /// The error a call must throw, by case (the messages are free text).
    enum Expected: CustomStringConvertible {
        case invalidArgument
        case deadlineOutOfRange
        case unsupportedClock(PrecisionClock.Source)

        var description: String {
            switch self {
            case .invalidArgument: return "invalidArgument"
            case .deadlineOutOfRange: return "deadlineOutOfRange"
            case .unsupportedClock(let source): return "unsupportedClock(\(source))"
            }
        }

        func matches(_ error: any Error) -> Bool {
            switch (self, error as? PrecisionTimerError) {
            case (.invalidArgument, .invalidArgument?), (.deadlineOutOfRange, .deadlineOutOfRange?):
                return true
            case (.unsupportedClock(let expected), .unsupportedClock(let got)?):
                return expected == got
            default:
                return false
            }
        }
    }

    func assertThrows<T>(_ expected: Expected, _ expression: @autoclosure () throws -> T, _ message: String = "",
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), message, file: file, line: line) { error in
            XCTAssertTrue(expected.matches(error), "expected \(expected), got \(error) \(message)",
                          file: file, line: line)
        }
    }

    func assertThrowsAsync(_ expected: Expected, _ message: String = "", file: StaticString = #filePath,
                           line: UInt = #line, _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("expected \(expected), nothing was thrown \(message)", file: file, line: line)
        } catch {
            XCTAssertTrue(expected.matches(error), "expected \(expected), got \(error) \(message)",
                          file: file, line: line)
        }
    }

    func makeScheduler() -> (TimerScheduler, VirtualClock) {
        let clock = VirtualClock()
        return (TimerScheduler(clock: clock), clock)
    }

    /// Runs `operation`, returning nil instead of hanging when it has not finished
    /// within `limit` of real time (it is then cancelled).
    func withWatchdog<T: Sendable>(_ limit: Duration = .seconds(10),
                                   _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Durations past the `Int64` nanosecond range, including ones whose whole
    /// seconds do not fit in `Int64` (the standard library's `components` traps
    /// on those).
    let overflowing: [Duration] = [.seconds(Int64.max), .nanoseconds(Int64.max), .seconds(1e20),
                                   Duration(attoseconds: .max)]
    /// Hugely negative durations.
    let hugelyNegative: [Duration] = [.seconds(Int64.min), .seconds(-1e20), Duration(attoseconds: .min)]

    // MARK: - PrecisionClock and its instants

    func testInstantArithmeticSaturatesAtMinAndMax() {
        XCTAssertEqual(Instant(nanoseconds: .max - 5) + .nanoseconds(10), .max)
        XCTAssertEqual(Instant(nanoseconds: .min + 5) - .nanoseconds(10), .min)
        XCTAssertEqual(Instant.max + .seconds(Int64.max), .max)
        XCTAssertEqual(Instant.min + .seconds(Int64.min), .min)
        XCTAssertEqual(Instant.min - .seconds(Int64.max), .min)
        XCTAssertEqual(Instant.max - .seconds(Int64.min), .max)
        var later = Instant.max
        later += .nanoseconds(1)
        XCTAssertEqual(later, .max)
        var earlier = Instant.min
        earlier -= .nanoseconds(1)
        XCTAssertEqual(earlier, .min)
        // Sub-nanosecond parts keep rounding so a deadline is never early.
        XCTAssertEqual(Instant(nanoseconds: 0) + Duration(attoseconds: 1), Instant(nanoseconds: 1))
        XCTAssertEqual(Instant(nanoseconds: 0) - Duration(attoseconds: 1), Instant(nanoseconds: 0))
        XCTAssertEqual(Instant(nanoseconds: 0) - Duration(attoseconds: -1), Instant(nanoseconds: 1))
    }

    func testDurationsBeyondInt64SecondsSaturateInsteadOfTrapping() {
        let origin = Instant(nanoseconds: 0)
        for duration in overflowing {
            XCTAssertEqual(origin + duration, .max, "\(duration)")
            XCTAssertLessThanOrEqual(origin - duration, Instant(nanoseconds: -Int64.max), "\(duration)")
            XCTAssertEqual(Int64(duration.timespec.tv_sec), Int64.max / 1_000_000_000, "\(duration)")
        }
        for duration in hugelyNegative {
            XCTAssertEqual(origin + duration, .min, "\(duration)")
            XCTAssertEqual(origin - duration, .max, "\(duration): negating it would trap")
        }
    }

    func testInstantDifferenceAcrossTheWholeRangeIsExact() {
        let span = Instant.max - Instant.min
        XCTAssertEqual(span.attoseconds, Int128(UInt64.max) * 1_000_000_000)
        XCTAssertEqual((Instant.min - Instant.max).attoseconds, -Int128(UInt64.max) * 1_000_000_000)
        XCTAssertEqual(Instant.min.duration(to: .max), span)
    }

    func testInstantFromTimespecNormalisesAndSaturates() {
        XCTAssertEqual(Instant(timespec(tv_sec: 1, tv_nsec: 1_500_000_000)).nanoseconds, 2_500_000_000)
        XCTAssertEqual(Instant(timespec(tv_sec: 1, tv_nsec: -1)).nanoseconds, 999_999_999)
        XCTAssertEqual(Instant(timespec(tv_sec: .max, tv_nsec: 0)), .max)
        XCTAssertEqual(Instant(timespec(tv_sec: .min, tv_nsec: 0)), .min)
    }

    func testDurationTimespecClampsToInt64Nanoseconds() {
        let high = Duration.seconds(Int64.max).timespec
        XCTAssertEqual(high.tv_sec, 9_223_372_036)
        XCTAssertEqual(high.tv_nsec, 854_775_807)
        let low = Duration.seconds(Int64.min).timespec
        XCTAssertEqual(low.tv_sec, -9_223_372_037)
        XCTAssertEqual(low.tv_nsec, 145_224_192, "normalised: tv_nsec in 0..<1e9")
        let tiny = Duration(attoseconds: 1).timespec
        XCTAssertEqual(tiny.tv_sec, 0)
        XCTAssertEqual(tiny.tv_nsec, 1, "rounded up")
    }

    func testDispatchTimeConversionsClamp() {
        XCTAssertEqual(Instant(DispatchTime.distantFuture), .max)
        XCTAssertEqual(Instant.max.dispatchTime, .distantFuture)
        for ns: Int64 in [.min, -5, 0] {
            XCTAssertEqual(Instant(nanoseconds: ns).dispatchTime.uptimeNanoseconds, 1,
                           "an instant before boot is the earliest DispatchTime")
        }
    }

    func testDispatchWallTimeAtOrBeforeTheEpochIsLongPastNotDistantFuture() {
        XCTAssertEqual(Instant.max.dispatchWallTime, .distantFuture)
        XCTAssertEqual(Instant(DispatchWallTime.distantFuture), .max)
        for ns: Int64 in [.min, -1_000_000_000, 0, 1, 2] {
            let wall = Instant(nanoseconds: ns).dispatchWallTime
            XCTAssertNotEqual(wall, .distantFuture, "\(ns) ns")
            XCTAssertEqual(Instant(wall).nanoseconds, 3, "\(ns) ns clamps to the earliest wall time")
        }
        XCTAssertEqual(Instant(Instant(nanoseconds: 1_000).dispatchWallTime).nanoseconds, 1_000)
        let fired = expectation(description: "a pre-1970 wall deadline is long past")
        DispatchQueue.global().asyncAfter(wallDeadline: Instant(nanoseconds: -1).dispatchWallTime) {
            fired.fulfill()
        }
        wait(for: [fired], timeout: 10)
    }

    func testInstantDescriptionOfTheExtremes() {
        XCTAssertEqual(Instant.max.description, "9223372036.854775807s")
        XCTAssertEqual(Instant.min.description, "-9223372037.145224192s")
    }

    // MARK: - Waiting

    let strategies: [WaitStrategy] = [.sleep, .spin, .hybrid(margin: .microseconds(20)), .adaptive]

    func testWaitUntilSaturatedDeadlineThrowsDeadlineOutOfRange() {
        let clock = PrecisionClock()
        for strategy in strategies {
            assertThrows(.deadlineOutOfRange, try clock.wait(until: .max, strategy: strategy), "\(strategy)")
            assertThrows(.deadlineOutOfRange, try clock.wait(until: clock.now + .seconds(Int64.max), strategy: strategy))
        }
    }

    func testWaitUntilPastDeadlineReturnsAtOnce() throws {
        let clock = PrecisionClock()
        for strategy in strategies {
            for deadline in [Instant.min, clock.now - .seconds(1)] {
                let result = try clock.wait(until: deadline, strategy: strategy)
                XCTAssertEqual(result.deadline, deadline)
                XCTAssertGreaterThanOrEqual(result.woke, deadline)
                XCTAssertGreaterThanOrEqual(result.latenessNanoseconds, 0)
            }
        }
    }

    func testWaitForZeroOrNegativeDurationReturnsAtOnce() throws {
        let clock = PrecisionClock()
        for duration in [Duration.zero, .nanoseconds(-1), .seconds(-5)] + hugelyNegative {
            let before = clock.now
            let result = try clock.wait(for: duration, strategy: .sleep)
            XCTAssertGreaterThanOrEqual(result.deadline, before, "\(duration)")
            XCTAssertLessThanOrEqual(result.deadline, result.woke, "\(duration)")
            XCTAssertLessThanOrEqual(result.woke, clock.now)
        }
    }

    func testWaitForOverflowingDurationThrowsDeadlineOutOfRange() {
        let clock = PrecisionClock()
        for duration in overflowing {
            assertThrows(.deadlineOutOfRange, try clock.wait(for: duration), "\(duration)")
        }
    }

    func testHybridNegativeMarginThrowsInvalidArgument() {
        let clock = PrecisionClock()
        for margin in [Duration.nanoseconds(-1), .seconds(Int64.min)] {
            assertThrows(.invalidArgument, try clock.wait(until: clock.now + .milliseconds(1),
                                                          strategy: .hybrid(margin: margin)))
            assertThrows(.invalidArgument, try clock.wait(until: .min, strategy: .hybrid(margin: margin)),
                         "also for a deadline already past")
        }
    }

    func testHybridMarginLongerThanTheWaitSpinsAndIsNeverEarly() throws {
        let clock = PrecisionClock()
        for margin in [Duration.seconds(10), .seconds(1e20)] {
            let result = try clock.wait(for: .milliseconds(1), strategy: .hybrid(margin: margin))
            XCTAssertGreaterThanOrEqual(result.woke, result.deadline)
        }
    }

    func testMonotonicRawSleepingWaitsThrowUnsupportedClockButSpinWorks() throws {
        let raw = PrecisionClock.monotonicRaw
        for strategy in [WaitStrategy.sleep, .hybrid(margin: .microseconds(20)), .adaptive] {
            assertThrows(.unsupportedClock(.monotonicRaw), try raw.wait(for: .microseconds(50), strategy: strategy))
            assertThrows(.unsupportedClock(.monotonicRaw),
                         try raw.wait(until: raw.now + .microseconds(50), strategy: strategy))
        }
        let result = try raw.wait(for: .microseconds(50), strategy: .spin)
        XCTAssertGreaterThanOrEqual(result.woke, result.deadline)
    }

    func testAdaptiveMarginForNonsenseWaitLengthsStaysInBounds() {
        for length in [Duration.seconds(-1), .zero] + overflowing + hugelyNegative {
            XCTAssertTrue(AdaptiveMargin.bounds.contains(AdaptiveMargin.margin(forWaitOf: length)), "\(length)")
        }
    }

    // MARK: - Async sleep

    func testAsyncSleepUntilPastDeadlineReturnsAtOnce() async throws {
        let (scheduler, clock) = makeScheduler()
        for deadline in [Instant.min, clock.now() - .seconds(1), clock.now()] {
            let returned = try await withWatchdog {
                try await scheduler.sleep(until: deadline)
                return true
            }
            XCTAssertNotNil(returned, "\(deadline): returns without the virtual clock moving")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testAsyncSleepUntilSaturatedDeadlineSleepsUntilCancelled() async throws {
        let (scheduler, clock) = makeScheduler()
        let sleeper = Task { try await scheduler.sleep(until: .max) }
        XCTAssertTrue(waitUntil { scheduler.statistics.liveTimers == 1 }, "the sleep waits for \"never\"")
        clock.advance(by: .seconds(Int64.max))  // to the end of (virtual) time: still asleep
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        sleeper.cancel()
        let result = await sleeper.result
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        // Clock-generic code: now + a huge duration saturates at "never".
        let generic = Task { try await Task.sleep(for: .seconds(Int64.max), clock: PrecisionClock()) }
        try await Task.sleep(for: .milliseconds(20))
        generic.cancel()
        let genericResult = await generic.result
        XCTAssertThrowsError(try genericResult.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
    }

    func testAsyncSleepNegativeToleranceThrowsInvalidArgumentEvenWhenPast() async {
        let (scheduler, clock) = makeScheduler()
        await assertThrowsAsync(.invalidArgument) {
            try await scheduler.sleep(until: clock.now() + .milliseconds(1), tolerance: .nanoseconds(-1))
        }
        await assertThrowsAsync(.invalidArgument, "a deadline already past does not hide it") {
            try await scheduler.sleep(until: clock.now() - .seconds(1), tolerance: .nanoseconds(-1))
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testAsyncSleepOnMonotonicRawThrowsUnsupportedClock() async {
        let (scheduler, clock) = makeScheduler()
        await assertThrowsAsync(.unsupportedClock(.monotonicRaw)) {
            try await scheduler.sleep(until: clock.now() + .milliseconds(1), on: .monotonicRaw)
        }
        await assertThrowsAsync(.unsupportedClock(.monotonicRaw)) {
            let raw = PrecisionClock.monotonicRaw
            try await raw.sleep(until: raw.now + .milliseconds(1))
        }
    }

    func testAsyncSleepInACancelledTaskThrowsCancellationError() async throws {
        let (scheduler, clock) = makeScheduler()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await scheduler.sleep(until: clock.now() + .seconds(1))
        }
        do {
            try await task.value
            XCTFail("a cancelled task's sleep returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "nothing left behind")
    }

    // MARK: - TimerScheduler and its options

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
        let timer = try scheduler.schedule(after: .milliseconds(1)) { _ in fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 10), .success, "granted or refused, the timer fires")
        withExtendedLifetime(timer) {}
    }

    func testSchedulerNameLongerThanFifteenBytesIsTruncated() throws {
        let scheduler = try TimerScheduler(options: .init(name: "abcdefghijklmnopqrstuvwxyz"))
        let name = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let timer = try scheduler.schedule(after: .zero) { _ in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(cmc_thread_id())/comm", encoding: .utf8)
            name.append(comm ?? "unreadable")
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(name.all.first?.trimmingCharacters(in: .newlines), "abcdefghijklmno")
        withExtendedLifetime(timer) {}
    }

    func testOneVirtualClockDrivesSeveralSchedulersInTimeOrder() throws {
        let clock = VirtualClock()
        let start = clock.now()
        let first = TimerScheduler(clock: clock)
        let second = TimerScheduler(clock: clock)
        let log = Recorder<String>()
        let a = try first.repeating(every: .milliseconds(3)) { log.append("a\($0.index)@\(($0.firedAt - start).ns)") }
        let b = try second.repeating(every: .milliseconds(2)) { log.append("b\($0.index)@\(($0.firedAt - start).ns)") }
        clock.advance(by: .milliseconds(6))
        XCTAssertEqual(log.all, ["b0@2000000", "a0@3000000", "b1@4000000", "a1@6000000", "b2@6000000"])
        withExtendedLifetime((a, b)) {}
    }

    func testVirtualTimeAtTheEndOfTheRangeNeverFiresASaturatedDeadline() throws {
        // Near Int64.max the grid saturates: the tick at .max means "never", so
        // advancing to the end of time terminates instead of firing it forever.
        let clock = VirtualClock(monotonic: .max - 5_000_000)
        let scheduler = TimerScheduler(clock: clock)
        let ticks = Recorder<Int64>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { ticks.append($0.index) }
        clock.advance(to: .max)
        XCTAssertEqual(ticks.all, [0, 1, 2, 3])  // .max − 4 ms … .max − 1 ms; the next would be .max
        XCTAssertEqual(clock.now(), .max)
        withExtendedLifetime(timer) {}
    }

    func testCancelAfterAOneShotFiredLeavesItFired() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = try scheduler.schedule(after: .milliseconds(1)) { _ in }
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(timer.hasFired)
        timer.cancel()
        XCTAssertTrue(timer.hasFired, "a fired one-shot stays fired")
        XCTAssertFalse(timer.isCancelled)
    }

    // MARK: - Timer factories

    func testScheduleAfterZeroOrNegativeDelayFiresAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        for delay in [Duration.zero, .nanoseconds(-1), .seconds(-1)] + hugelyNegative {
            let now = clock.now()
            let ticks = Recorder<Tick>()
            let timer = try scheduler.schedule(after: delay) { ticks.append($0) }
            XCTAssertEqual(timer.deadline, now, "\(delay)")
            clock.advance(by: .zero)
            XCTAssertEqual(ticks.all.map(\.firedAt), [now], "\(delay)")
        }
    }

    func testScheduleAfterOverflowingDelayMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let toMax = Duration.nanoseconds(Int64.max - clock.now().nanoseconds)  // a deadline of exactly .max
        for delay in overflowing + [toMax] {
            let timer = try scheduler.schedule(after: delay) { _ in XCTFail("a never deadline fired") }
            XCTAssertEqual(timer.deadline, .max, "\(delay)")
            assertNeverFiresAndCancels(timer, scheduler, clock)
        }
    }

    func testScheduleAtSaturatedDeadlineMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = try scheduler.schedule(at: .max) { _ in XCTFail("a never deadline fired") }
        assertNeverFiresAndCancels(timer, scheduler, clock)
    }

    /// A timer whose deadline is "never": live, no wake-up planned for it, not
    /// fired at the end of time, and cancellable.
    func assertNeverFiresAndCancels(_ timer: any ScheduledTimer, _ scheduler: TimerScheduler, _ clock: VirtualClock,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(timer.isCancelled, file: file, line: line)
        XCTAssertNil(scheduler.engine.nextWake(), "never is not a wake-up", file: file, line: line)
        let fires = scheduler.statistics.fires
        clock.advance(by: .seconds(Int64.max))
        XCTAssertEqual(scheduler.statistics.fires, fires, file: file, line: line)
        timer.cancel()
        XCTAssertTrue(timer.isCancelled, file: file, line: line)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, file: file, line: line)
    }

    func testScheduleAtPastDeadlineFiresAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let ancient = try scheduler.schedule(at: .min) { ticks.append($0) }
        let recent = try scheduler.schedule(at: clock.now() - .seconds(1)) { ticks.append($0) }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.count, 2)
        let first = try XCTUnwrap(ticks.all.first { $0.deadline == .min })
        XCTAssertEqual(first.firedAt, clock.now())
        XCTAssertEqual(first.latenessNanoseconds, .max, "lateness in Int64 nanoseconds saturates")
        XCTAssertEqual(first.lateness, clock.now() - .min, "the Duration is exact")
        XCTAssertTrue(ancient.hasFired && recent.hasFired)
    }

    func testScheduleAfterSecondsRejectsNonFiniteAndOverflow() throws {
        let (scheduler, clock) = makeScheduler()
        for seconds in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            assertThrows(.invalidArgument, try scheduler.schedule(afterSeconds: seconds) { _ in }, "\(seconds)")
        }
        for seconds: Double in [1e300, 9.2e9, .greatestFiniteMagnitude] {
            let timer = try scheduler.schedule(afterSeconds: seconds) { _ in }
            XCTAssertEqual(timer.deadline, .max, "\(seconds) means never")
            timer.cancel()
        }
        for seconds: Double in [-1e300, -9.2e9, -.greatestFiniteMagnitude, -0.0, -1] {
            let timer = try scheduler.schedule(afterSeconds: seconds) { _ in }
            XCTAssertEqual(timer.deadline, clock.now(), "\(seconds) fires as soon as possible")
        }
    }

    func testNegativeLeewayThrowsInvalidArgument() {
        let (scheduler, _) = makeScheduler()
        let owner = Owner(flag: DeinitFlag())
        for leeway in [Duration.nanoseconds(-1)] + hugelyNegative {
            assertThrows(.invalidArgument, try scheduler.schedule(after: .milliseconds(1), leeway: leeway) { _ in })
            assertThrows(.invalidArgument, try scheduler.schedule(at: .min, leeway: leeway) { _ in })
            assertThrows(.invalidArgument, try scheduler.repeating(every: .milliseconds(1), leeway: leeway) { _ in })
            assertThrows(.invalidArgument,
                         try scheduler.repeating(every: .milliseconds(1), leeway: leeway, owner: owner) { _, _ in })
            assertThrows(.invalidArgument, try scheduler.ticks(every: .milliseconds(1), leeway: leeway))
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testOneShotLeewayIsHonouredNotClamped() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = try scheduler.schedule(after: .milliseconds(1), leeway: .seconds(1)) { ticks.append($0) }
        clock.advance(by: .seconds(5))
        XCTAssertEqual(ticks.all.map(\.firedAt), [timer.deadline + .seconds(1)],
                       "the virtual scheduler wakes as late as allowed: deadline + the whole leeway")
        for leeway in overflowing {
            XCTAssertNoThrow(try scheduler.schedule(after: .milliseconds(1), leeway: leeway) { _ in }, "\(leeway)")
        }
    }

    func testRepeatingZeroOrNegativeIntervalThrowsInvalidArgument() {
        let (scheduler, _) = makeScheduler()
        let owner = Owner(flag: DeinitFlag())
        for interval in [Duration.zero, .nanoseconds(-1), Duration(attoseconds: -1)] + hugelyNegative {
            assertThrows(.invalidArgument, try scheduler.repeating(every: interval) { _ in }, "\(interval)")
            assertThrows(.invalidArgument, try scheduler.repeating(every: interval, owner: owner) { _, _ in })
            assertThrows(.invalidArgument, try scheduler.ticks(every: interval))
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testRepeatingOverflowingIntervalMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let toMax = Duration.nanoseconds(Int64.max - clock.now().nanoseconds)  // tick 0 due at .max
        for interval in overflowing + [toMax] {
            let timer = try scheduler.repeating(every: interval) { _ in XCTFail("a never tick fired") }
            XCTAssertEqual(timer.nextDeadline, .max, "\(interval)")
            assertNeverFiresAndCancels(timer, scheduler, clock)
            let ticks = try scheduler.ticks(every: interval)
            XCTAssertEqual(ticks.timer.nextDeadline, .max, "\(interval)")
            ticks.timer.cancel()
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testRepeatingIntervalUnderOneNanosecondRoundsUpToOne() throws {
        let (scheduler, _) = makeScheduler()
        let timer = try scheduler.repeating(every: Duration(attoseconds: 1)) { _ in }
        XCTAssertEqual(timer.interval, .nanoseconds(1))
        let seconds = try scheduler.repeating(everySeconds: 1e-12) { _ in }
        XCTAssertEqual(seconds.interval, .nanoseconds(1))
    }

    func testRepeatingLeewayLargerThanTheIntervalIsClampedToIt() throws {
        let (scheduler, _) = makeScheduler()
        for leeway in [Duration.seconds(5)] + overflowing {
            let timer = try scheduler.repeating(every: .milliseconds(1), leeway: leeway) { _ in }
            XCTAssertEqual(timer.leeway, .milliseconds(1), "\(leeway)")
        }
    }

    func testRepeatingSaturatedStartMeansNever() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: .max) { _ in XCTFail("fired") }
        assertNeverFiresAndCancels(timer, scheduler, clock)
        let ticks = try scheduler.ticks(every: .milliseconds(1), startingAt: .max)
        XCTAssertEqual(ticks.timer.nextDeadline, .max)
        ticks.timer.cancel()
    }

    func testRepeatingStartMoreThanTwoToTheSixtyTwoNanosecondsBackThrowsDeadlineOutOfRange() throws {
        let (scheduler, clock) = makeScheduler()
        let limit = clock.now() - .nanoseconds(Int64(1) << 62)
        for start in [Instant.min, limit - .nanoseconds(1)] {
            assertThrows(.deadlineOutOfRange, try scheduler.repeating(every: .seconds(1), startingAt: start) { _ in },
                         "\(start)")
            assertThrows(.deadlineOutOfRange, try scheduler.repeating(every: .seconds(1), startingAt: start,
                                                                      policy: .burst) { _ in })
        }
        // The limit itself is accepted: one fire, every tick since counted as missed.
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .seconds(1), startingAt: limit) { ticks.append($0) }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.missed), [4_611_686_018])
        withExtendedLifetime(timer) {}
    }

    func testRepeatingStartInThePastFiresAtOnceAndCountsTheMissedTicks() throws {
        let (scheduler, clock) = makeScheduler()
        let now = clock.now()
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: now - .milliseconds(10)) {
            ticks.append($0)
        }
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.index), [10])
        XCTAssertEqual(ticks.all.map(\.missed), [10])
        XCTAssertEqual(ticks.all.map(\.deadline), [now])
        XCTAssertEqual(timer.nextDeadline, now + .milliseconds(1), "the grid is kept")
    }

    func testRepeatingEverySecondsRejectsNonFiniteZeroNegativeAndOverflow() {
        let (scheduler, _) = makeScheduler()
        for seconds: Double in [.nan, .infinity, -.infinity, 0, -0.0, -1, -1e300, -.greatestFiniteMagnitude] {
            assertThrows(.invalidArgument, try scheduler.repeating(everySeconds: seconds) { _ in }, "\(seconds)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        for seconds: Double in [1e300, 9.2e9, .greatestFiniteMagnitude] {
            let timer = try? scheduler.repeating(everySeconds: seconds) { _ in }
            XCTAssertEqual(timer?.nextDeadline, .max, "\(seconds) means never")
            timer?.cancel()
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testEveryFactoryOnMonotonicRawThrowsUnsupportedClock() {
        let (scheduler, clock) = makeScheduler()
        let raw = PrecisionClock.monotonicRaw
        let owner = Owner(flag: DeinitFlag())
        let expected = Expected.unsupportedClock(.monotonicRaw)
        assertThrows(expected, try scheduler.schedule(after: .milliseconds(1), clock: raw) { _ in })
        assertThrows(expected, try scheduler.schedule(after: .seconds(-1), clock: raw) { _ in })
        assertThrows(expected, try scheduler.schedule(at: clock.now(.monotonicRaw), clock: raw) { _ in })
        assertThrows(expected, try scheduler.schedule(afterSeconds: 0.001, clock: raw) { _ in })
        assertThrows(expected, try scheduler.repeating(every: .milliseconds(1), clock: raw) { _ in })
        assertThrows(expected, try scheduler.repeating(everySeconds: 0.001, clock: raw) { _ in })
        assertThrows(expected, try scheduler.repeating(every: .milliseconds(1), clock: raw, owner: owner) { _, _ in })
        assertThrows(expected, try scheduler.ticks(every: .milliseconds(1), clock: raw))
        assertThrows(expected, try FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler, clock: raw) { _ in })
        assertThrows(expected, try FrameLink(frameInterval: 2, scheduler: scheduler, clock: raw) { _ in })
        assertThrows(expected, try FrameLink(preferredFramesPerSecond: 60, owner: owner, scheduler: scheduler,
                                             clock: raw) { _, _ in })
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testWeakOwnerGoneBeforeTheFirstTickCancelsTheTimerWithoutACall() throws {
        let (scheduler, clock) = makeScheduler()
        let flag = DeinitFlag()
        let calls = Recorder<Int64>()
        var owner: Owner? = Owner(flag: flag)
        let timer = try scheduler.repeating(every: .milliseconds(1), owner: owner!) { _, tick in
            calls.append(tick.index)
        }
        owner = nil
        XCTAssertTrue(flag.isSet, "the timer does not keep its owner")
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testCancelWhileATickWaitsOnItsQueueDropsTheTick() throws {
        let (scheduler, clock) = makeScheduler()
        let queue = DispatchQueue(label: "bad-input.delivery")
        let calls = Recorder<Int64>()
        queue.suspend()
        let oneShot = try scheduler.schedule(after: .milliseconds(1), delivery: .queue(queue)) { calls.append($0.index) }
        let repeating = try scheduler.repeating(every: .milliseconds(1), delivery: .queue(queue)) {
            calls.append($0.index)
        }
        clock.advance(by: .milliseconds(1))  // both ticks are on the suspended queue now
        oneShot.cancel()
        repeating.cancel()
        queue.resume()
        queue.sync {}
        XCTAssertEqual(calls.count, 0, "a tick queued before the cancel is dropped")
    }

    func testTicksBufferingOfNoTicksThrowsInvalidArgument() {
        let (scheduler, _) = makeScheduler()
        for n in [0, -1, Int.min] {
            assertThrows(.invalidArgument, try scheduler.ticks(every: .milliseconds(1), buffering: .newest(n)), "\(n)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testCancellingTheTimerOfATickSequenceEndsTheSequence() async throws {
        let (scheduler, clock) = makeScheduler()
        let sequence = try scheduler.ticks(every: .milliseconds(1), buffering: .all)
        clock.advance(by: .milliseconds(3))
        sequence.timer.cancel()
        let indices = try await withWatchdog {
            var seen: [Int64] = []
            for await tick in sequence { seen.append(tick.index) }
            return seen
        }
        XCTAssertEqual(indices, [0, 1, 2], "the buffered ticks, then the end (nil: it hung)")

        let other = try scheduler.ticks(every: .milliseconds(1), buffering: .all)
        clock.advance(by: .milliseconds(3))
        let viaTick = try await withWatchdog {
            var seen: [Int64] = []
            for await tick in other {
                seen.append(tick.index)
                if seen.count == 1 { tick.cancelTimer() }
            }
            return seen
        }
        XCTAssertEqual(viaTick, [0, 1, 2], "a tick's cancelTimer() ends it too")
    }

    // MARK: - Timer lifecycle

    func testCancelTwiceIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.cancel()
        XCTAssertTrue(timer.isCancelled)
        XCTAssertNil(timer.nextDeadline)
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.count, 0)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testEveryCallOnACancelledRepeatingTimerIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        try timer.setInterval(.milliseconds(5))
        XCTAssertEqual(timer.interval, .milliseconds(1), "unchanged")
        try timer.setNextDeadline(clock.now())
        XCTAssertNil(timer.nextDeadline)
        assertThrows(.invalidArgument, try timer.setInterval(.zero), "a bad value still throws")
        try timer.setNextDeadline(.max)
        XCTAssertNil(timer.nextDeadline)
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        XCTAssertEqual(scheduler.statistics.fires, 0)
    }

    func testEveryCallOnACancelledOneShotIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.schedule(after: .milliseconds(1)) { calls.append($0.index) }
        timer.cancel()
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        timer.cancel()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(timer.isCancelled)
        XCTAssertFalse(timer.hasFired)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testSuspendAndResumeTwiceAreIdempotent() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { calls.append($0.index) }
        let next = timer.nextDeadline
        timer.resume()  // not suspended: nothing to do
        XCTAssertEqual(timer.nextDeadline, next)
        timer.suspend()
        timer.suspend()
        XCTAssertTrue(timer.isSuspended)
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(calls.count, 0)
        timer.resume()
        timer.resume()
        XCTAssertFalse(timer.isSuspended)
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(calls.all, [2, 3, 4, 5], "one fire per tick after the resume: queued once, not twice")
    }

    func testCallsOnAFiredOneShotAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.schedule(after: .milliseconds(1)) { calls.append($0.index) }
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(timer.hasFired)
        timer.suspend()
        XCTAssertFalse(timer.isSuspended)
        timer.resume()
        timer.fire()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 1, "fired once, and only once")
        XCTAssertTrue(timer.hasFired)
        timer.cancel()
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFireTwiceBeforeItRunsMergesOnAOneShotButNotOnARepeatingTimer() throws {
        let (scheduler, clock) = makeScheduler()
        let oneShotCalls = Recorder<Tick>()
        let oneShot = try scheduler.schedule(after: .seconds(1)) { oneShotCalls.append($0) }
        oneShot.fire()
        oneShot.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(oneShotCalls.all.map(\.isManual), [true])
        XCTAssertTrue(oneShot.hasFired)

        let repeatingCalls = Recorder<Tick>()
        let repeating = try scheduler.repeating(every: .seconds(1)) { repeatingCalls.append($0) }
        let next = repeating.nextDeadline
        repeating.fire()
        repeating.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(repeatingCalls.all.map(\.isManual), [true, true])
        XCTAssertEqual(repeating.nextDeadline, next, "the grid does not move")
    }

    func testFireOnASuspendedTimerRunsTheHandlerOnce() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Tick>()
        let repeating = try scheduler.repeating(every: .milliseconds(1)) { calls.append($0) }
        repeating.suspend()
        repeating.fire()
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(calls.all.map(\.isManual), [true])
        XCTAssertTrue(repeating.isSuspended, "still suspended")

        let oneShotCalls = Recorder<Tick>()
        let oneShot = try scheduler.schedule(after: .seconds(1)) { oneShotCalls.append($0) }
        oneShot.suspend()
        oneShot.fire()
        clock.advance(by: .zero)
        XCTAssertEqual(oneShotCalls.all.map(\.isManual), [true])
        XCTAssertTrue(oneShot.hasFired)
        XCTAssertFalse(oneShot.isSuspended)
    }

    func testSetIntervalRejectsBadIntervalsAndChangesNothing() throws {
        let (scheduler, _) = makeScheduler()
        let timer = try scheduler.repeating(every: .milliseconds(2)) { _ in }
        let next = timer.nextDeadline
        for interval in [Duration.zero, .nanoseconds(-1)] + hugelyNegative {
            assertThrows(.invalidArgument, try timer.setInterval(interval), "\(interval)")
        }
        XCTAssertEqual(timer.interval, .milliseconds(2))
        XCTAssertEqual(timer.nextDeadline, next)
        // Too large for Int64 nanoseconds: the pending tick keeps its deadline,
        // the ones after it never come.
        for interval in overflowing {
            try timer.setInterval(interval)
            XCTAssertEqual(timer.interval, .nanoseconds(Int64.max), "\(interval)")
            XCTAssertEqual(timer.nextDeadline, next)
        }
    }

    func testSetIntervalBelowTheLeewayClampsTheLeeway() throws {
        let (scheduler, _) = makeScheduler()
        let timer = try scheduler.repeating(every: .milliseconds(10), leeway: .milliseconds(5)) { _ in }
        try timer.setInterval(.milliseconds(2))
        XCTAssertEqual(timer.interval, .milliseconds(2))
        XCTAssertEqual(timer.leeway, .milliseconds(2))
    }

    func testSetNextDeadlineRejectsFarPastDeadlinesAndTakesNever() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { ticks.append($0) }
        let next = timer.nextDeadline
        let limit = clock.now() - .nanoseconds(Int64(1) << 62)
        for deadline in [Instant.min, limit - .nanoseconds(1)] {
            assertThrows(.deadlineOutOfRange, try timer.setNextDeadline(deadline), "\(deadline)")
        }
        XCTAssertEqual(timer.nextDeadline, next, "unchanged")
        try timer.setNextDeadline(.max)
        XCTAssertEqual(timer.nextDeadline, .max, "never, until moved again")
        XCTAssertNil(scheduler.engine.nextWake())
        // A past deadline within range fires at once, on the moved grid.
        try timer.setNextDeadline(clock.now() - .milliseconds(5))
        clock.advance(by: .zero)
        XCTAssertEqual(ticks.all.map(\.deadline), [clock.now()])
        XCTAssertEqual(ticks.all.map(\.missed), [5])
    }

    func testTickCancelTimerTwiceOrAfterCancelIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let ticks = Recorder<Tick>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { tick in
            ticks.append(tick)
            tick.cancelTimer()
            tick.cancelTimer()  // inside its own handler: returns at once, twice
        }
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(ticks.count, 1)
        XCTAssertTrue(timer.isCancelled)
        let stale = try XCTUnwrap(ticks.all.first)
        stale.cancelTimer()  // after the cancel, from outside the handler
        timer.cancel()
        XCTAssertTrue(timer.isCancelled)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    // MARK: - FrameLink

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

    func testFrameLinkFrameIntervalOrBaseRateOutOfRangeThrows() {
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
        assertThrows(.deadlineOutOfRange, try FrameLink(frameInterval: Int.max, scheduler: scheduler) { _ in },
                     "the period overflows")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testFrameLinkFrameIntervalAboveTheBaseRateReportsOneFramePerSecond() throws {
        let (scheduler, clock) = makeScheduler()
        let frames = Recorder<FrameLink.Frame>()
        let link = try FrameLink(baseRate: 60, frameInterval: 120, scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(link.preferredFramesPerSecond, 1, "60 / 120 rounds down to 0: reported as 1")
        let period = Duration.nanoseconds(16_666_667 * 120)  // 120 base periods exactly: 0.5 fps
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

    // MARK: - RateMeter

    func testRateMeterWindowZeroOrNegativeThrowsInvalidArgument() {
        for window in [Duration.zero, .nanoseconds(-1), Duration(attoseconds: -1)] + hugelyNegative {
            assertThrows(.invalidArgument, try RateMeter(window: window), "\(window)")
        }
    }

    func testRateMeterHugeWindowAndExtremeInstantsSaturateInsteadOfTrapping() throws {
        for window in overflowing {
            var meter = try RateMeter(window: window)
            meter.record(at: Instant(nanoseconds: 0))
            meter.record(at: .max)  // an interval of Int64.max ns: its mean once trapped converting back
            let stats = meter.statistics
            XCTAssertEqual(stats.count, 2, "\(window): nothing evicted")
            XCTAssertEqual(stats.maxInterval, .nanoseconds(Int64.max))
            XCTAssertEqual(stats.meanInterval, .nanoseconds(Int64.max), "clamped converting back from Double")
            XCTAssertGreaterThan(stats.rate, 0)
        }
    }

    func testRateMeterEventOutOfOrderIsRecordedAtTheNewestTime() throws {
        var meter = try RateMeter(window: .seconds(1))
        let t0 = Instant(nanoseconds: 1_000_000_000)
        meter.record(at: t0 + .milliseconds(10))
        meter.record(at: t0 + .milliseconds(20))
        meter.record(at: t0 + .milliseconds(15))  // earlier than the newest
        let stats = meter.statistics
        XCTAssertEqual(stats.count, 3)
        XCTAssertEqual(stats.minInterval, .zero, "recorded at the newest's time: never a negative interval")
        XCTAssertEqual(stats.maxInterval, .milliseconds(10))
    }

    func testRateMeterResetTwiceAndTooFewEventsGiveZeros() throws {
        var meter = try RateMeter()
        XCTAssertEqual(meter.statistics, RateMeter.Statistics(count: 0, rate: 0, minInterval: .zero,
                                                              maxInterval: .zero, meanInterval: .zero, jitter: .zero))
        meter.record(at: Instant(nanoseconds: 5))
        XCTAssertEqual(meter.statistics.count, 1)
        XCTAssertEqual(meter.statistics.rate, 0)
        meter.record(at: Instant(nanoseconds: 10))
        meter.reset()
        meter.reset()
        XCTAssertEqual(meter.statistics.count, 0)
        XCTAssertEqual(meter.statistics.rate, 0)
    }

    // MARK: - TaskRegistry

    func testRegistryScheduleWithBadArgumentsThrowsAndKeepsTheLiveTask() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        try registry.schedule("k", after: .milliseconds(1), repeating: .milliseconds(1)) { runs.append(1) }
        assertThrows(.invalidArgument, try registry.schedule("k", after: .zero, repeating: .zero) { runs.append(2) })
        assertThrows(.invalidArgument, try registry.schedule("k", after: .zero, repeating: .milliseconds(-1)) {})
        assertThrows(.invalidArgument, try registry.schedule("k", after: .zero, leeway: .nanoseconds(-1)) {})
        XCTAssertTrue(registry.contains("k"), "the live task is kept")
        XCTAssertEqual(registry.count, 1)
        clock.advance(by: .milliseconds(2))
        XCTAssertEqual(runs.all, [1, 1])
        // Delays and intervals past the clock's range are "never", not errors.
        try registry.schedule("never-1", after: .seconds(1e20)) { runs.append(3) }
        try registry.schedule("never-2", after: .zero, repeating: .seconds(1e20)) { runs.append(4) }
        try registry.schedule("never-3", after: .seconds(Int64.max), repeating: .milliseconds(1)) { runs.append(5) }
        clock.advance(by: .seconds(1_000))
        XCTAssertEqual(runs.all.filter { $0 > 2 }, [4], "only the repeating task due at once ran, once")
        XCTAssertEqual(registry.count, 4)
        registry.cancelAll()
    }

    func testRegistryNegativeDelayRunsAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        for delay in [Duration.seconds(-5)] + hugelyNegative {
            let runs = Recorder<String>()
            try registry.schedule("once", after: delay) { runs.append("once") }
            try registry.schedule("every", after: delay, repeating: .milliseconds(1)) { runs.append("every") }
            clock.advance(by: .zero)
            XCTAssertEqual(runs.all.sorted(), ["every", "once"], "\(delay)")
            XCTAssertFalse(registry.contains("once"), "a one-shot that ran leaves the registry")
            registry.cancelAll()
        }
    }

    func testRegistryRepeatingTaskRunsOnTheSchedulersClock() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Instant>()
        try registry.schedule("r", after: .milliseconds(5), repeating: .milliseconds(10)) {
            runs.append(clock.now())
        }
        let start = clock.now()
        clock.advance(by: .milliseconds(25))
        XCTAssertEqual(runs.all, [start + .milliseconds(5), start + .milliseconds(15), start + .milliseconds(25)],
                       "virtual time, not the kernel's clock")
    }

    func testRegistryCancelOfAnUnknownKeyOrTwiceReturnsFalse() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        XCTAssertFalse(registry.cancel("unknown"))
        try registry.schedule("k", after: .milliseconds(1)) { runs.append(1) }
        XCTAssertTrue(registry.cancel("k"))
        XCTAssertFalse(registry.cancel("k"))
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(runs.count, 0)
    }

    func testRegistryCancelAllTwiceIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        registry.cancelAll()
        try registry.schedule(after: .milliseconds(1)) { runs.append(1) }
        try registry.schedule(after: .milliseconds(1), repeating: .milliseconds(1)) { runs.append(2) }
        XCTAssertEqual(registry.count, 2)
        registry.cancelAll()
        registry.cancelAll()
        XCTAssertEqual(registry.count, 0)
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(runs.count, 0)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    // MARK: - Stopwatch

    func testStopwatchOnAReadOnlyClockWorks() {
        var watch = Stopwatch(clock: .monotonicRaw)
        let lap = watch.lap()
        XCTAssertGreaterThanOrEqual(lap, .zero)
        XCTAssertGreaterThanOrEqual(watch.elapsed, lap)
        let started = watch.startedAt
        watch.reset()
        watch.reset()
        XCTAssertGreaterThanOrEqual(watch.startedAt, started)
        XCTAssertEqual(watch.lastLapAt, watch.startedAt)
    }

    // MARK: - ThreadControls

    func testSetTimerSlackNegativeThrowsZeroRestoresHugeIsClamped() throws {
        let before = try ThreadControls.timerSlack()
        defer { try? ThreadControls.setTimerSlack(before) }
        for slack in [Duration.nanoseconds(-1)] + hugelyNegative {
            assertThrows(.invalidArgument, try ThreadControls.setTimerSlack(slack), "\(slack)")
        }
        for slack in [Duration.seconds(10)] + overflowing {
            try ThreadControls.setTimerSlack(slack)
            XCTAssertEqual(try ThreadControls.timerSlack(), .nanoseconds(Int32.max), "\(slack) is clamped")
        }
        try ThreadControls.setTimerSlack(.microseconds(5))
        XCTAssertEqual(try ThreadControls.timerSlack(), .microseconds(5))
        try ThreadControls.setTimerSlack(.zero)
        let restored = try ThreadControls.timerSlack()
        XCTAssertNotEqual(restored, .microseconds(5), "zero restores the thread's default")
        XCTAssertGreaterThan(restored, .zero)
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

    // MARK: - VirtualClock

    func testVirtualClockNegativeAdvanceAndBusyAreNoOps() throws {
        let (scheduler, clock) = makeScheduler()
        let calls = Recorder<Int64>()
        let timer = try scheduler.schedule(after: .nanoseconds(1)) { calls.append($0.index) }
        let now = clock.now()
        let wall = clock.now(.realtime)
        for duration in [Duration.nanoseconds(-1), .seconds(-1)] + hugelyNegative {
            clock.advance(by: duration)
            clock.busy(for: duration)
        }
        clock.advance(to: now - .seconds(1))
        clock.advance(to: .min)
        XCTAssertEqual(clock.now(), now)
        XCTAssertEqual(clock.now(.realtime), wall)
        XCTAssertEqual(calls.count, 0)
        withExtendedLifetime(timer) {}
    }

    func testVirtualClockOverflowingAdvanceSaturatesAtMax() throws {
        for duration in overflowing {
            let (scheduler, clock) = makeScheduler()
            let calls = Recorder<Instant>()
            let timer = try scheduler.schedule(after: .seconds(1)) { _ in calls.append(clock.now()) }
            let due = timer.deadline
            clock.advance(by: duration)
            XCTAssertEqual(clock.now(), .max, "\(duration)")
            XCTAssertEqual(calls.all, [due], "a timer due on the way fires on time")
        }
    }

    func testVirtualClockSetRealtimeMovesOnlyTheWallClock() throws {
        let (scheduler, clock) = makeScheduler()
        let wall = Recorder<Instant>()
        let steady = Recorder<Instant>()
        let wallStart = clock.now(.realtime)
        let wallTimer = try scheduler.schedule(at: wallStart + .milliseconds(10), clock: .realtime) {
            wall.append($0.firedAt)
        }
        let steadyTimer = try scheduler.schedule(after: .milliseconds(10)) { steady.append($0.firedAt) }
        clock.setRealtime(wallStart - .seconds(3_600))  // set back an hour
        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(steady.count, 1, "monotonic timers are not affected")
        XCTAssertEqual(wall.count, 0, "the wall clock has not reached the deadline again")
        clock.setRealtime(.min)
        XCTAssertEqual(wall.count, 0)
        clock.setRealtime(wallStart + .seconds(3_600))  // set forward: due now
        XCTAssertEqual(wall.all, [wallStart + .seconds(3_600)])
        withExtendedLifetime((wallTimer, steadyTimer)) {}
    }

    // MARK: - PrecisionTimerError.Errno

    func testErrnoOfAnyNumberHasADescription() {
        XCTAssertEqual(PrecisionTimerError.Errno(rawValue: 0).description, "Success (errno 0)")
        for number: Int32 in [-1, 99_999, .min, .max] {
            let text = PrecisionTimerError.Errno(rawValue: number).description
            XCTAssertTrue(text.hasSuffix("(errno \(number))"), text)
            XCTAssertGreaterThan(text.count, "(errno \(number))".count, text)
        }
        let error = PrecisionTimerError.system(PrecisionTimerError.Errno(rawValue: -1), operation: "prctl")
        XCTAssertTrue(error.description.hasPrefix("prctl: "), error.description)
    }
}
