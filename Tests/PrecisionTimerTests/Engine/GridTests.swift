@testable import PrecisionTimer
import XCTest

/// The grid on its own: each missed-tick policy, resume, interval changes and
/// moved deadlines, exact and saturating at the edges of the clock's range.
final class GridTests: XCTestCase {
    func testTicksLieOnTheGrid() {
        var grid = Grid(firstDeadline: 1_000, period: .init(nanoseconds: 10))
        XCTAssertEqual(grid.deadline(ofTick: 0), 1_000)
        XCTAssertEqual(grid.deadline(ofTick: 7), 1_070)
        for k in 0..<5 as Range<Int64> {
            let fired = grid.fire(at: 1_000 + k * 10 + 3, policy: .skip)  // each fire a little late
            XCTAssertEqual(fired.index, k)
            XCTAssertEqual(fired.deadline, 1_000 + k * 10, "lateness never moves the grid")
            XCTAssertEqual(fired.missed, 0)
        }
        XCTAssertEqual(grid.nextIndex, 5)
        XCTAssertEqual(grid.nextDeadline, 1_050)
    }

    func testSkipFiresTheLatestDueTickAndCountsTheOthers() {
        var grid = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        _ = grid.fire(at: 0, policy: .skip)
        let fired = grid.fire(at: 45, policy: .skip)  // ticks 1, 2, 3 and 4 are due
        XCTAssertEqual(fired.index, 4)
        XCTAssertEqual(fired.deadline, 40)
        XCTAssertEqual(fired.missed, 3)
        XCTAssertEqual(grid.nextDeadline, 50)
        XCTAssertEqual(grid.lastFiredIndex, 4)
    }

    func testBurstFiresEveryTickBackToBack() {
        var grid = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        let fires = (0..<4).map { _ in grid.fire(at: 35, policy: .burst) }
        XCTAssertEqual(fires.map(\.index), [0, 1, 2, 3])
        XCTAssertEqual(fires.map(\.deadline), [0, 10, 20, 30])
        XCTAssertEqual(fires.map(\.missed), [0, 0, 0, 0])
        XCTAssertEqual(grid.nextDeadline, 40)
    }

    func testDelayReanchorsAtTheFire() {
        var grid = Grid(firstDeadline: 100, period: .init(nanoseconds: 10))
        let first = grid.fire(at: 117, policy: .delay)
        XCTAssertEqual(first.index, 0)
        XCTAssertEqual(first.deadline, 100)
        XCTAssertEqual(grid.nextDeadline, 127, "one interval after the fire")
        let second = grid.fire(at: 127, policy: .delay)
        XCTAssertEqual(second.index, 1)
        XCTAssertEqual(second.deadline, 127)
        XCTAssertEqual(grid.nextDeadline, 137)
    }

    func testResumeJumpsABurstGridToTheLatestDueTickOnly() {
        var burst = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        _ = burst.fire(at: 0, policy: .burst)
        burst.resume(at: 55, policy: .burst)  // ticks 1…5 fell due while suspended
        let fired = burst.fire(at: 55, policy: .burst)
        XCTAssertEqual(fired.index, 5)
        XCTAssertEqual(fired.missed, 4)
        var skip = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        _ = skip.fire(at: 0, policy: .skip)
        skip.resume(at: 55, policy: .skip)
        XCTAssertEqual(skip.nextIndex, 1, "skip folds the missed ticks when it fires")
        XCTAssertEqual(skip.fire(at: 55, policy: .skip).index, 5)
        var early = Grid(firstDeadline: 100, period: .init(nanoseconds: 10))
        early.resume(at: 50, policy: .burst)
        XCTAssertEqual(early.nextDeadline, 100, "nothing due: unchanged")
    }

    func testAnIntervalChangeMidRunKeepsThePendingTick() {
        var grid = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        for _ in 0..<3 { _ = grid.fire(at: grid.nextDeadline, policy: .skip) }
        XCTAssertEqual(grid.nextDeadline, 30)
        grid.setPeriod(.init(nanoseconds: 100))
        XCTAssertEqual(grid.nextIndex, 3)
        XCTAssertEqual(grid.nextDeadline, 30, "the pending tick keeps its deadline")
        XCTAssertEqual(grid.deadline(ofTick: 4), 130)
        XCTAssertEqual(grid.fire(at: 30, policy: .skip).index, 3)
        XCTAssertEqual(grid.fire(at: 130, policy: .skip).deadline, 130)
    }

    func testAMovedDeadlineCarriesTheGrid() {
        var grid = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        _ = grid.fire(at: 0, policy: .skip)
        grid.moveNextTick(to: 1_005)
        XCTAssertEqual(grid.nextIndex, 1)
        XCTAssertEqual(grid.nextDeadline, 1_005)
        XCTAssertEqual(grid.deadline(ofTick: 3), 1_025)
    }

    func testAHugeJumpAndAnIntervalChangeLateInATimersLifeStayExact() {
        // A 1 ms grid anchored 3,000 s back: tick 3,000,000 is due now.
        let now: Int64 = 5_000_000_000_000
        var grid = Grid(firstDeadline: now - 3_000_000_000_000, period: .init(nanoseconds: 1_000_000))
        let fired = grid.fire(at: now, policy: .skip)
        XCTAssertEqual(fired.index, 3_000_000)
        XCTAssertEqual(fired.deadline, now)
        XCTAssertEqual(fired.missed, 3_000_000, "ticks 0 ..< 3,000,000 missed")
        // An hourly interval now: index × interval would pass Int64 (3e6 × 3.6e12),
        // the re-anchored grid never forms that product.
        grid.setPeriod(.init(nanoseconds: 3_600_000_000_000))
        XCTAssertEqual(grid.nextDeadline, now + 1_000_000)
        XCTAssertEqual(grid.deadline(ofTick: 3_000_002), now + 1_000_000 + 3_600_000_000_000)
        _ = grid.fire(at: now + 1_000_000, policy: .skip)
        XCTAssertEqual(grid.nextDeadline, now + 1_000_000 + 3_600_000_000_000)
    }

    func testDeadlinesPastTheRangeSaturateAtNever() {
        var grid = Grid(firstDeadline: .max - 15, period: .init(nanoseconds: 10))
        XCTAssertEqual(grid.deadline(ofTick: 1), .max - 5)
        XCTAssertEqual(grid.deadline(ofTick: 2), .max, "past the range: never")
        XCTAssertEqual(grid.deadline(ofTick: .max), .max)
        _ = grid.fire(at: .max - 15, policy: .skip)
        _ = grid.fire(at: .max - 5, policy: .skip)
        XCTAssertEqual(grid.nextDeadline, .max)
        var huge = Grid(firstDeadline: 0, period: .init(nanoseconds: .max))
        _ = huge.fire(at: 0, policy: .burst)
        XCTAssertEqual(huge.nextDeadline, .max)
        XCTAssertEqual(Grid(firstDeadline: .max, period: .zero).nextDeadline, .max)
    }

    func testSkipFromTheFurthestStartTheFactoriesAllowIsExact() {
        // Starts lie at most 2^62 ns before now (TimerEngine.maximumLookBack).
        let now: Int64 = 1 << 61
        var grid = Grid(firstDeadline: now - (1 << 62), period: .init(nanoseconds: 1))
        let fired = grid.fire(at: now, policy: .skip)
        XCTAssertEqual(fired.index, 1 << 62)
        XCTAssertEqual(fired.deadline, now)
        XCTAssertEqual(fired.missed, 1 << 62)
        XCTAssertEqual(grid.nextDeadline, now + 1)
    }

    func testADroppedTickCountsAsMissedOnTheNextFire() {
        var grid = Grid(firstDeadline: 0, period: .init(nanoseconds: 10))
        _ = grid.fire(at: 0, policy: .skip)
        let dropped = grid.fire(at: 25, policy: .skip)  // tick 2, tick 1 missed
        XCTAssertEqual(dropped.index, 2)
        XCTAssertEqual(dropped.missed, 1)
        grid.drop(firedTick: dropped.index, missed: dropped.missed)
        let next = grid.fire(at: 30, policy: .skip)
        XCTAssertEqual(next.index, 3)
        XCTAssertEqual(next.missed, 2, "ticks 1 and 2 got no call")
        grid.drop(firedTick: 99, missed: 0)  // not the last one fired: no change
        XCTAssertEqual(grid.lastFiredIndex, 3)
    }
}
