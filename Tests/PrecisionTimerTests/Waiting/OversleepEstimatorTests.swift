@testable import PrecisionTimer
import XCTest

final class OversleepEstimatorTests: XCTestCase {
    func testMarginConvergesToTheHighPercentilePlusHeadroom() {
        var estimator = OversleepEstimator()
        XCTAssertEqual(estimator.margin, OversleepEstimator.initialMargin)
        // 256 samples: 1 µs ... 256 µs. p99.5 of 256 values is rank ⌈255 × 0.995⌉ = 254,
        // the 255th.
        XCTAssertEqual(OversleepEstimator.capacity, 256)
        for i in 1...256 {
            estimator.record(Int64(i) * 1_000)
        }
        XCTAssertEqual(estimator.percentile, 255_000)
        XCTAssertEqual(estimator.margin, 255_000 + OversleepEstimator.headroom)
    }

    func testMarginFollowsTheMachineDownAndIsClamped() {
        var estimator = OversleepEstimator()
        for _ in 0..<OversleepEstimator.capacity { estimator.record(80_000) }
        XCTAssertEqual(estimator.margin, 82_000)
        // The machine calms down: old samples age out.
        for _ in 0..<OversleepEstimator.capacity { estimator.record(5_000) }
        XCTAssertEqual(estimator.margin, 7_000)
        // Never below the floor, never above the ceiling.
        for _ in 0..<OversleepEstimator.capacity { estimator.record(0) }
        XCTAssertEqual(estimator.margin, OversleepEstimator.floor)
        for _ in 0..<OversleepEstimator.capacity { estimator.record(50_000_000) }
        XCTAssertEqual(estimator.margin, OversleepEstimator.ceiling)
        // A single hiccup among 256 samples does not drag the margin up.
        for _ in 0..<(OversleepEstimator.capacity - 1) { estimator.record(10_000) }
        estimator.record(40_000_000)
        for _ in 0..<16 { estimator.record(10_000) }
        XCTAssertEqual(estimator.margin, 12_000)
    }

    func testTheSpinBudgetBoundsTheExpectedSpinOfAWait() {
        var estimator = OversleepEstimator()
        for i in 1...128 { estimator.record(Int64(i) * 1_000) }  // 1 µs ... 128 µs
        // A long wait can afford the whole percentile margin (p99.5 of 128 values
        // is rank ⌈127 × 0.995⌉ = 127, the largest: 128 µs, plus the headroom).
        XCTAssertEqual(estimator.margin(forWaitOf: 100_000_000), 130_000)
        // A 1 ms wait may spin 5 % = 50 µs on average: with oversleep uniform on
        // 1...128 µs that is the margin m with (m − x)+ averaging 50 µs, m ≈ 113.6 µs.
        XCTAssertEqual(AdaptiveMargin.spinBudget, 0.05)
        let m = estimator.margin(forWaitOf: 1_000_000)
        XCTAssertGreaterThan(m, 111_000)
        XCTAssertLessThan(m, 116_000)
        var spin: Int64 = 0
        for i in 1...128 { spin += Swift.max(0, m - Int64(i) * 1_000) }
        XCTAssertLessThanOrEqual(spin / 128, 50_000)
        XCTAssertGreaterThan(spin / 128, 49_000)
        // Never under the floor, even for a tiny wait.
        XCTAssertEqual(estimator.margin(forWaitOf: 10), OversleepEstimator.floor)
    }
}
