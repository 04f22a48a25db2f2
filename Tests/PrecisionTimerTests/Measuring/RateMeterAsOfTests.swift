import PrecisionTimer
import XCTest

/// ``RateMeter``'s percentiles, its view "as of now" (a stalled source reads as
/// stalled) and its non-throwing default initializer. Deterministic: every event
/// is recorded at an instant given by the test.
final class RateMeterAsOfTests: XCTestCase {
    typealias Instant = PrecisionClock.Instant
    private let t0: Int64 = 10_000_000_000

    /// A 100 Hz source for two seconds: events at t0 + k × 10 ms, k = 0 ... 199.
    private func steadyMeter() -> (RateMeter, newest: Instant) {
        var meter = RateMeter()
        for k in 0..<200 { meter.record(at: Instant(nanoseconds: t0 + Int64(k) * 10_000_000)) }
        return (meter, Instant(nanoseconds: t0 + 199 * 10_000_000))
    }

    func testTheDefaultInitializerDoesNotThrow() {
        let meter = RateMeter()
        XCTAssertEqual(meter.window, .seconds(1))
        XCTAssertEqual(RateMeter.defaultWindow, .seconds(1))
        XCTAssertEqual(meter.clock, .monotonic)
        XCTAssertEqual(RateMeter(clock: .boottime).clock, .boottime)
    }

    /// A perfectly regular source has a jitter of exactly zero and a mean of
    /// exactly its interval, however long the interval (the squares of these
    /// pass 2^53, where E[d²] − E[d]² in doubles is rounding noise).
    func testARegularSourceHasZeroJitterAtAnyInterval() {
        for interval: Int64 in [1_000_000_001, 3_600_000_000_007, 86_400_000_000_003] {
            var meter = RateMeter(window: .seconds(1_000_000_000))
            for k in 0...60 { meter.record(at: Instant(nanoseconds: Int64(k) * interval)) }
            let s = meter.statistics
            XCTAssertEqual(s.minInterval, .nanoseconds(interval))
            XCTAssertEqual(s.maxInterval, .nanoseconds(interval))
            XCTAssertEqual(s.meanInterval, .nanoseconds(interval), "interval \(interval)")
            XCTAssertEqual(s.jitter, .zero, "interval \(interval)")
        }
        // Two intervals, 1 ns apart, of about a day: a mean half-way, rounded
        // up, and a jitter of half a nanosecond, rounded up.
        var meter = RateMeter(window: .seconds(1_000_000))
        let day: Int64 = 86_400_000_000_000
        for t in [0, day, 2 * day + 1] { meter.record(at: Instant(nanoseconds: t)) }
        XCTAssertEqual(meter.statistics.meanInterval, .nanoseconds(day + 1))
        XCTAssertEqual(meter.statistics.jitter, .nanoseconds(1))
    }

    /// A mean interval that fits in `Int64` nanoseconds is reported as it is,
    /// up to `Int64.max`.
    func testAMeanIntervalNearInt64MaxIsExact() {
        var meter = RateMeter(window: .nanoseconds(Int64.max))
        let interval: Int64 = 9_210_000_000_000_000_000
        meter.record(at: Instant(nanoseconds: Int64.min / 2))
        meter.record(at: Instant(nanoseconds: Int64.min / 2 + interval))
        XCTAssertEqual(meter.statistics.meanInterval, .nanoseconds(interval))
        XCTAssertEqual(meter.statistics.jitter, .zero)
    }

    func testPercentilesByNearestRank() throws {
        var meter = RateMeter(window: .seconds(100))
        // Intervals of 1 ... 100 ms, in a scrambled order (k × 37 mod 100).
        var t = t0
        meter.record(at: Instant(nanoseconds: t))
        for k in 0..<100 {
            t += Int64((k * 37) % 100 + 1) * 1_000_000
            meter.record(at: Instant(nanoseconds: t))
        }
        let s = meter.statistics
        XCTAssertEqual(s.count, 101)
        XCTAssertEqual(s.minInterval, .milliseconds(1))
        XCTAssertEqual(s.p50Interval, .milliseconds(50))
        XCTAssertEqual(s.p99Interval, .milliseconds(99))
        XCTAssertEqual(s.maxInterval, .milliseconds(100))
        XCTAssertEqual(s.meanInterval, .microseconds(50_500))

        var few = RateMeter(window: .seconds(10))
        for ms: Int64 in [0, 10, 40, 60] { few.record(at: Instant(nanoseconds: t0 + ms * 1_000_000)) }
        // Intervals 10, 30, 20 ms: sorted 10, 20, 30; ranks ⌈1.5⌉ = 2 and ⌈2.97⌉ = 3.
        XCTAssertEqual(few.statistics.p50Interval, .milliseconds(20))
        XCTAssertEqual(few.statistics.p99Interval, .milliseconds(30), "under 100 intervals p99 is the maximum")
    }

    func testASteadySourceReadsTheSameAsOfNowAsAtItsNewestEvent() {
        let (meter, newest) = steadyMeter()
        let atNewest = meter.statistics
        XCTAssertEqual(atNewest.count, 101)
        XCTAssertEqual(atNewest.rate, 100, accuracy: 1e-9)
        XCTAssertEqual(meter.rate, atNewest.rate)
        XCTAssertEqual(atNewest.p50Interval, .milliseconds(10))
        XCTAssertEqual(meter.statistics(asOf: newest), atNewest)
        XCTAssertEqual(meter.statistics(asOf: newest - .seconds(5)), atNewest, "before the newest: the newest")
        // 5 ms after the newest: within the longest interval, the source is not overdue.
        let soon = meter.statistics(asOf: newest + .milliseconds(5))
        XCTAssertEqual(soon.count, 100, "the event at newest − 1 s left the window")
        XCTAssertEqual(soon.rate, 100, accuracy: 1e-9)
        XCTAssertEqual(meter.rate(asOf: newest + .milliseconds(5)), soon.rate)
    }

    func testAStalledSourceReadsAsStalled() {
        let (meter, newest) = steadyMeter()
        XCTAssertEqual(meter.statistics.rate, 100, accuracy: 1e-9, "without asOf a frozen source keeps its rate")
        // Silent for 500 ms: 51 events in the window, 50 intervals over the
        // 1,000 ms from the first of them to now.
        let half = meter.statistics(asOf: newest + .milliseconds(500))
        XCTAssertEqual(half.count, 51)
        XCTAssertEqual(half.rate, 50, accuracy: 1e-9)
        XCTAssertEqual(half.maxInterval, .milliseconds(10), "the silence is not an interval")
        XCTAssertEqual(meter.rate(asOf: newest + .milliseconds(500)), half.rate)
        // Just overdue: 11 ms of silence; the window keeps 99 events, whose 98
        // intervals run over the 991 ms from the first of them to now.
        XCTAssertEqual(meter.rate(asOf: newest + .milliseconds(11)), 98 / 0.991, accuracy: 1e-9)
        XCTAssertEqual(meter.statistics(asOf: newest + .milliseconds(11)).rate, 98 / 0.991, accuracy: 1e-9)
        // Exactly one interval of silence is not overdue: 99 events, 98 intervals over 980 ms.
        XCTAssertEqual(meter.rate(asOf: newest + .milliseconds(10)), 100, accuracy: 1e-9)
        // Silent for a whole window: one event left, then none.
        let window = meter.statistics(asOf: newest + .seconds(1))
        XCTAssertEqual(window.count, 1)
        XCTAssertEqual(window.rate, 0)
        XCTAssertEqual(meter.statistics(asOf: newest + .seconds(2)).count, 0)
        XCTAssertEqual(meter.rate(asOf: newest + .seconds(2)), 0)
        XCTAssertEqual(meter.statistics.count, 101, "asking as of now does not change the meter")
    }

    func testTheSourceResumingAfterAStall() {
        var (meter, newest) = steadyMeter()
        let back = newest + .seconds(3)
        meter.record(at: back)
        meter.record(at: back + .milliseconds(10))
        XCTAssertEqual(meter.statistics.count, 2, "recording evicts what left the window")
        XCTAssertEqual(meter.statistics(asOf: back + .milliseconds(10)).rate, 100, accuracy: 1e-9)
    }
}
