@testable import PrecisionTimer
import XCTest

/// Bad input to ``RateMeter`` (`Measuring/RateMeter.swift`). `CONTRIBUTING.md` names these tests
/// row by row against the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in
/// `BadInputSupport.swift`.
final class RateMeterBadInputTests: BadInputTestCase {

    func testRateMeterHugeWindowAndExtremeInstantsSaturateInsteadOfTrapping() throws {
        for window in overflowing {
            var meter = RateMeter(window: window)
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
        var meter = RateMeter(window: .seconds(1))
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
        var meter = RateMeter()
        XCTAssertEqual(meter.statistics, RateMeter.Statistics(count: 0, rate: 0, minInterval: .zero,
                                                              maxInterval: .zero, meanInterval: .zero, jitter: .zero,
                                                              p50Interval: .zero, p99Interval: .zero))
        XCTAssertEqual(meter.statistics(asOf: .max), meter.statistics)
        XCTAssertEqual(meter.rate(asOf: .min), 0)
        meter.record(at: Instant(nanoseconds: 5))
        XCTAssertEqual(meter.statistics.count, 1)
        XCTAssertEqual(meter.statistics.rate, 0)
        meter.record(at: Instant(nanoseconds: 10))
        meter.reset()
        meter.reset()
        XCTAssertEqual(meter.statistics.count, 0)
        XCTAssertEqual(meter.statistics.rate, 0)
    }
}
