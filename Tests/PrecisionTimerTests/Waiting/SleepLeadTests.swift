@testable import PrecisionTimer
import XCTest

/// The `.sleep` strategy's learned lead: the estimator's low percentile, and the
/// two-phase sleep that aims early and sleeps again when it wakes before the
/// deadline.
final class SleepLeadTests: XCTestCase {
    func testTheLeadIsZeroUntil64SamplesThenTheFirstPercentile() {
        var estimator = OversleepEstimator()
        XCTAssertEqual(estimator.lead, 0)
        for i in 1...63 { estimator.record(Int64(i) * 1_000) }
        XCTAssertEqual(estimator.lead, 0, "63 samples are not enough to aim early")
        estimator.record(64_000)
        // 64 samples 1 µs ... 64 µs: rank ⌊63 × 0.01⌋ = 0, the smallest.
        XCTAssertEqual(estimator.lead, 1_000)
        for i in 65...256 { estimator.record(Int64(i) * 1_000) }
        // 256 samples 1 µs ... 256 µs: rank ⌊255 × 0.01⌋ = 2, the third smallest.
        XCTAssertEqual(estimator.lowPercentile, 3_000)
        XCTAssertEqual(estimator.lead, 3_000)
        XCTAssertEqual(SleepLead.quantile, 0.01)
    }

    func testTheLeadFallsQuicklyAndIsClamped() {
        var estimator = OversleepEstimator()
        for _ in 0..<OversleepEstimator.capacity { estimator.record(50_000_000) }
        XCTAssertEqual(estimator.lead, SleepLead.bounds.upperBound.saturatingNanoseconds)
        // The machine gets quick: 16 quick wakes are enough to bring the lead down
        // (the lead errs towards sleeping longer, never towards spinning).
        for _ in 0..<16 { estimator.record(20_000) }
        XCTAssertEqual(estimator.lead, 20_000)
        for _ in 0..<OversleepEstimator.capacity { estimator.record(-5) }
        XCTAssertEqual(estimator.lead, 0)
    }

    func testALeadLongerThanTheWakeUpSleepsAgainAndIsNeverEarly() throws {
        let clock = PrecisionClock()
        let target = clock.now.nanoseconds + 200_000_000
        let lead: Int64 = 150_000_000
        let outcome = try clock.sleepAhead(until: target, lead: lead)
        XCTAssertGreaterThanOrEqual(outcome.woke, target)
        let firstOversleep = try XCTUnwrap(outcome.firstOversleep, "the target was 200 ms away: a first sleep is aimed")
        XCTAssertGreaterThan(firstOversleep, 0)
        // Exact: a second sleep happened if and only if the first wake came before the target.
        XCTAssertEqual(outcome.resleeps > 0, target - lead + firstOversleep < target)
        XCTAssertLessThan(outcome.woke - target, 500_000_000, "generous: a shared VM can stall")
    }

    func testATargetCloserThanTheLeadIsOneSleepAtTheTarget() throws {
        let clock = PrecisionClock()
        let target = clock.now.nanoseconds + 200_000_000
        let outcome = try clock.sleepAhead(until: target, lead: 10_000_000_000)
        XCTAssertNil(outcome.firstOversleep, "nothing aimed early, nothing to learn")
        XCTAssertEqual(outcome.resleeps, 1)
        XCTAssertGreaterThanOrEqual(outcome.woke, target)
    }

    func testAPastTargetDoesNotSleep() throws {
        let clock = PrecisionClock()
        let target = clock.now.nanoseconds - 1_000
        let outcome = try clock.sleepAhead(until: target, lead: 1_000_000)
        XCTAssertNil(outcome.firstOversleep)
        XCTAssertEqual(outcome.resleeps, 0)
        XCTAssertGreaterThanOrEqual(outcome.woke, target)
    }

    func testSleepWaitsLearnALeadAndStayNeverEarly() throws {
        SleepLead.reset()
        XCTAssertEqual(SleepLead.current, .zero)
        let clock = PrecisionClock()
        // Relative to now and 2 ms away, so that a slow sanitizer build (the
        // lead's recompute runs before the sleep) does not turn a wait into a
        // past deadline. A thread preempted past it all the same returns
        // without sleeping and teaches nothing, so the waits go on until 64
        // wakes are known (at most ten times as many waits).
        var waits = 0
        while SleepLead.current == .zero && waits < 10 * OversleepEstimator.leadMinimumSamples {
            let deadline = clock.now + .milliseconds(2)
            let result = try clock.wait(until: deadline, strategy: .sleep)
            XCTAssertGreaterThanOrEqual(result.woke, deadline)
            waits += 1
        }
        // Every kernel wake comes back some nanoseconds after its aim, so 64 of
        // them give a positive lead.
        XCTAssertGreaterThanOrEqual(waits, OversleepEstimator.leadMinimumSamples)
        XCTAssertGreaterThan(SleepLead.current, .zero)
        XCTAssertTrue(SleepLead.bounds.contains(SleepLead.current))
        var deadline = clock.now
        for _ in 0..<100 {
            deadline += .microseconds(300)
            let result = try clock.wait(until: deadline, strategy: .sleep)
            XCTAssertGreaterThanOrEqual(result.woke, deadline, "aimed early, never returned early")
        }
    }
}
