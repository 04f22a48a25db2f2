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
}
