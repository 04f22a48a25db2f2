import XCTest
@testable import BenchSupport

final class TickGridTests: XCTestCase {
    /// The rule as the contenders applied it before TickGrid: the tick after a
    /// wake at `now` that served tick `k` is the first one still in the future.
    func oldNextTick(after k: Int, now: Int64, start: Int64, interval: Int64) -> Int {
        let due = now >= start ? Int((now - start) / interval) : -1
        return Swift.max(k + 1, due + 1)
    }

    func testAWakeServesEveryTickAlreadyDue() {
        var grid = TickGrid(start: 1_000, interval: 100, ticks: 10)
        XCTAssertEqual(grid.wake(at: 1_350), 350)  // 3.5 intervals late: one sample, 3 missed
        XCTAssertEqual(grid.next, 4)
        XCTAssertEqual(grid.missed, 3)
        XCTAssertEqual(grid.wake(at: 1_390), -10)  // early: serves its own tick only
        XCTAssertEqual(grid.next, 5)
        XCTAssertEqual(grid.fires, 2)
        XCTAssertEqual(grid.lastServed, 4)
        XCTAssertFalse(grid.finished)
    }

    func testTimerReportedFires() {
        var grid = TickGrid(start: 0, interval: 10, ticks: 6)
        grid.fire(missed: 2)  // Dispatch's data 3: ticks 0…2
        XCTAssertEqual(grid.next, 3)
        grid.fire(missed: 1, last: 5)  // a Tick for index 5 reporting 1 missed
        XCTAssertEqual(grid.missed, 3)
        XCTAssertEqual(grid.lastServed, 5)
        XCTAssertTrue(grid.finished)
        XCTAssertEqual(grid.deadline(5), 50)
    }

    /// A fire that stands for ticks past the run's end counts only the run's
    /// as missed: fires plus missed ticks never exceed the run's ticks.
    func testMissedTicksPastTheRunsEndAreNotCounted() {
        var grid = TickGrid(start: 0, interval: 10, ticks: 5)
        grid.fire()
        grid.fire(missed: 7)  // Dispatch's data 8 at tick 1: ticks 1…4 are the run's, 5…8 are not
        XCTAssertEqual(grid.missed, 3)
        XCTAssertEqual(grid.fires + grid.missed, 5)
        XCTAssertTrue(grid.finished)

        var waited = TickGrid(start: 0, interval: 10, ticks: 4)
        waited.wake(at: 0)
        waited.wake(at: 95)  // 8.5 intervals past tick 1: serves 1…3 of the run
        XCTAssertEqual(waited.missed, 2)
        XCTAssertEqual(waited.fires + waited.missed, 4)

        var reported = TickGrid(start: 0, interval: 10, ticks: 3)
        reported.fire(missed: 4, last: 4)  // a Tick for index 4 reporting 4 missed
        XCTAssertEqual(reported.missed, 2)
        XCTAssertTrue(reported.finished)
    }

    /// The grid serves exactly the ticks the loops' old rule served, for wakes
    /// early, on time and late by any number of intervals.
    func testTheRuleIsTheOneTheLoopsUsed() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let start = Int64.random(in: 0...1_000_000, using: &rng)
            let interval = Int64.random(in: 1...50_000, using: &rng)
            var grid = TickGrid(start: start, interval: interval, ticks: 1_000)
            var k = 0
            var skipped = 0
            while !grid.finished {
                let now = grid.nextDeadline + Int64.random(in: -2 * interval...(5 * interval), using: &rng)
                let late = grid.wake(at: now)
                XCTAssertEqual(late, now - (start + Int64(k) * interval))
                let next = oldNextTick(after: k, now: now, start: start, interval: interval)
                skipped += Swift.min(next - k - 1, 1_000 - k - 1)  // the run's ticks only
                k = next
                XCTAssertEqual(grid.next, k)
                XCTAssertEqual(grid.missed, skipped)
            }
        }
    }

    func testTheLoopWaitsForEachUnservedDeadline() {
        let samples = SampleBuffer(capacity: 16)
        var asked: [Int64] = []
        let lateness: [Int64] = [5, 250, -3, 0]  // the second wake swallows two ticks
        let missed = TickGrid.run(ticks: 6, start: 100, interval: 100, samples: samples) { deadline in
            asked.append(deadline)
            return lateness[asked.count - 1]
        }
        XCTAssertEqual(asked, [100, 200, 500, 600])
        XCTAssertEqual(Array(samples.samples), lateness)
        XCTAssertEqual(missed, 2)
    }
}
