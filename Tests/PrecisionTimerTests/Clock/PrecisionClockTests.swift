import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer
import XCTest

final class PrecisionClockTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    func testSourcesReadTheirKernelClocks() {
        XCTAssertEqual(PrecisionClock().source, .monotonic)
        for source in PrecisionClock.Source.allCases {
            let clock = PrecisionClock(source)
            let direct = cmc_now_ns(source.clockID)
            let ours = clock.now.nanoseconds
            let after = cmc_now_ns(source.clockID)
            XCTAssertLessThanOrEqual(direct, ours, "\(source)")
            XCTAssertLessThanOrEqual(ours, after, "\(source)")
            XCTAssertEqual(clock.minimumResolution, .nanoseconds(1))
        }
        // CLOCK_BOOTTIME is what ContinuousClock reads on Linux: never behind monotonic.
        let monotonic = PrecisionClock.monotonic.now.nanoseconds
        XCTAssertGreaterThanOrEqual(PrecisionClock.boottime.now.nanoseconds, monotonic)
    }

    func testInstantArithmeticIsExactAndSaturates() {
        let a = Instant(nanoseconds: 1_000)
        XCTAssertEqual((a + .nanoseconds(500)).nanoseconds, 1_500)
        XCTAssertEqual((a - .nanoseconds(1_500)).nanoseconds, -500)
        XCTAssertEqual(a.duration(to: Instant(nanoseconds: 3_500)), .nanoseconds(2_500))
        XCTAssertEqual(Instant(nanoseconds: 3_500) - a, .nanoseconds(2_500))
        XCTAssertEqual(Instant.max + .seconds(1), .max)
        XCTAssertEqual(Instant(nanoseconds: .max - 5) + .nanoseconds(10), .max)
        XCTAssertEqual(Instant.min - .seconds(1), .min)
        XCTAssertEqual(Instant(nanoseconds: 0) + .seconds(Int64.max), .max)
        XCTAssertEqual(Instant(nanoseconds: 0) - .seconds(Int64.max), .min)
        // The whole span between min and max is an exact Duration (no trap).
        XCTAssertEqual(Instant.min.duration(to: .max),
                       .nanoseconds(Int64.max) + .nanoseconds(Int64.max) + .nanoseconds(1))
        // Sub-nanosecond durations round up: a deadline is never early.
        XCTAssertEqual((a + .nanoseconds(0.25)).nanoseconds, 1_001)
        XCTAssertEqual((a + .nanoseconds(-0.25)).nanoseconds, 1_000)
        var b = a
        b += .microseconds(1)
        b -= .nanoseconds(1)
        XCTAssertEqual(b.nanoseconds, 1_999)
        XCTAssertTrue(a < b)
        XCTAssertEqual(Instant(nanoseconds: -1).description, "-1.999999999s")
        XCTAssertEqual(Instant(nanoseconds: 1_500_000_000).description, "1.500000000s")
    }

    func testTimespecConversions() {
        let i = Instant(nanoseconds: 5_123_456_789)
        let ts = i.timespec
        XCTAssertEqual(ts.tv_sec, 5)
        XCTAssertEqual(ts.tv_nsec, 123_456_789)
        XCTAssertEqual(Instant(ts), i)
        XCTAssertEqual(Instant(timespec(tv_sec: 1, tv_nsec: 2_000_000_000)).nanoseconds, 3_000_000_000)
        XCTAssertEqual(Duration(timespec(tv_sec: 2, tv_nsec: 5)), .nanoseconds(2_000_000_005))
        XCTAssertEqual(Duration.milliseconds(1500).timespec.tv_sec, 1)
        XCTAssertEqual(Duration.milliseconds(1500).timespec.tv_nsec, 500_000_000)
    }

    func testDispatchConversions() {
        let now = PrecisionClock.monotonic.now
        XCTAssertEqual(Instant(now.dispatchTime), now)
        // Bracketed by two readings: a preemption between them cannot fail it.
        let before = PrecisionClock.monotonic.now
        let ours = Instant(DispatchTime.now())
        let after = PrecisionClock.monotonic.now
        XCTAssertTrue(before <= ours && ours <= after, "DispatchTime's uptime is CLOCK_MONOTONIC on Linux")
        XCTAssertEqual(Instant.max.dispatchTime, .distantFuture)

        let wall = PrecisionClock.realtime.now
        XCTAssertEqual(Instant(wall.dispatchWallTime), wall)
        XCTAssertEqual(Instant(DispatchWallTime.distantFuture), .max)
        // CLOCK_REALTIME can be set meanwhile; a set clock is not this test's subject.
        let wallBefore = PrecisionClock.realtime.now
        let wallNow = Instant(DispatchWallTime.now())
        let wallAfter = PrecisionClock.realtime.now
        XCTAssertTrue(wallBefore <= wallNow && wallNow <= wallAfter, "DispatchWallTime is CLOCK_REALTIME")
    }

    func testWorksWithClockGenericCode() async throws {
        func elapsed<C: Clock>(on clock: C, sleeping duration: C.Duration) async throws -> C.Duration {
            let start = clock.now
            try await clock.sleep(until: start.advanced(by: duration), tolerance: nil)
            return start.duration(to: clock.now)
        }
        let d = try await elapsed(on: PrecisionClock(), sleeping: .milliseconds(5))
        XCTAssertGreaterThanOrEqual(d, .milliseconds(5))
        XCTAssertLessThan(d, .seconds(2))
        // Task.sleep with this clock is the stdlib's own generic path.
        let clock = PrecisionClock.boottime
        let deadline = clock.now + .milliseconds(3)
        try await Task.sleep(until: deadline, tolerance: .microseconds(100), clock: clock)
        XCTAssertGreaterThanOrEqual(clock.now, deadline)
    }
}
