@testable import PrecisionTimer
import XCTest

final class OversleepEstimatorTests: XCTestCase {
    func testMarginConvergesToTheHighPercentilePlusHeadroom() {
        var estimator = OversleepEstimator()
        XCTAssertEqual(estimator.margin, OversleepEstimator.initialMargin)
        // 128 samples: 1 µs ... 128 µs. p99 of 128 values is the 127th (rank 126).
        for i in 1...128 {
            estimator.record(Int64(i) * 1_000)
        }
        XCTAssertEqual(estimator.percentile, 127_000)
        XCTAssertEqual(estimator.margin, 127_000 + OversleepEstimator.headroom)
    }

    func testMarginFollowsTheMachineDownAndIsClamped() {
        var estimator = OversleepEstimator()
        for _ in 0..<128 { estimator.record(80_000) }
        XCTAssertEqual(estimator.margin, 82_000)
        // The machine calms down: old samples age out.
        for _ in 0..<128 { estimator.record(5_000) }
        XCTAssertEqual(estimator.margin, 7_000)
        // Never below the floor, never above the ceiling.
        for _ in 0..<128 { estimator.record(0) }
        XCTAssertEqual(estimator.margin, OversleepEstimator.floor)
        for _ in 0..<128 { estimator.record(50_000_000) }
        XCTAssertEqual(estimator.margin, OversleepEstimator.ceiling)
        // A single hiccup among 128 samples does not drag the margin up.
        for _ in 0..<127 { estimator.record(10_000) }
        estimator.record(40_000_000)
        for _ in 0..<16 { estimator.record(10_000) }
        XCTAssertEqual(estimator.margin, 12_000)
    }

    func testTheSpinBudgetBoundsTheExpectedSpinOfAWait() {
        var estimator = OversleepEstimator()
        for i in 1...128 { estimator.record(Int64(i) * 1_000) }  // 1 µs ... 128 µs
        // A long wait can afford the whole percentile margin.
        XCTAssertEqual(estimator.margin(forWaitOf: 100_000_000), 129_000)
        // A 1 ms wait may spin 3 % = 30 µs on average: with oversleep uniform on
        // 1...128 µs that is the margin m with (m − x)+ averaging 30 µs, m ≈ 88 µs.
        let m = estimator.margin(forWaitOf: 1_000_000)
        XCTAssertGreaterThan(m, 85_000)
        XCTAssertLessThan(m, 90_000)
        var spin: Int64 = 0
        for i in 1...128 { spin += Swift.max(0, m - Int64(i) * 1_000) }
        XCTAssertLessThanOrEqual(spin / 128, 30_000)
        XCTAssertGreaterThan(spin / 128, 29_000)
        // Never under the floor, even for a tiny wait.
        XCTAssertEqual(estimator.margin(forWaitOf: 10), OversleepEstimator.floor)
    }
}
