import CMonoClock
@testable import PrecisionTimer
import XCTest

/// ``WaitPlan/make(_:)`` as a table: the inputs read under the engine's lock,
/// and the wait they give. No thread, no clock: the plan is a pure function.
final class WaitPlanTests: XCTestCase {
    func earliest(latest: Int64, deadline: Int64? = nil, leeway: Int64 = 0, source: PrecisionClock.Source = .monotonic,
                  boottime: Bool = false, realtime: Bool = false) -> Earliest {
        Earliest(remainingLatest: latest, leeway: leeway, source: source, remainingDeadline: deadline ?? latest - leeway,
                 boottimePending: boottime, realtimePending: realtime)
    }

    func inputs(_ e: Earliest?, spinMargin: Int64 = 20_000, learned: Int64 = 30_000, spinning: Bool = true,
                minimumSpin: Int64 = 0, watched: Bool = true, spinStartWork: Int64 = 0) -> WaitPlan.Inputs {
        WaitPlan.Inputs(earliest: e, nowMonotonic: 1_000_000_000, nowRealtime: 5_000_000_000, learnedMargin: learned,
                        spinMargin: spinMargin, spinStartWork: spinStartWork, allowsSpinning: spinning,
                        minimumSpinMargin: minimumSpin, wallClockWatched: watched)
    }

    struct Row {
        let name: String
        let inputs: WaitPlan.Inputs
        let clock: clockid_t
        let sleepUntil: Int64
        let spinUntil: Int64
        let slack: UInt64
        let precise: Bool
        let wakeBy: Int64
    }

    func testTheTable() {
        let now: Int64 = 1_000_000_000
        let wall: Int64 = 5_000_000_000
        let rows: [Row] = [
            Row(name: "nothing pending: sleep until the doorbell", inputs: inputs(nil),
                clock: cmc_clock_monotonic, sleepUntil: .max, spinUntil: .min, slack: 1, precise: false, wakeBy: .max),
            Row(name: "zero leeway 1 ms away: sleep to the margin, spin the rest",
                inputs: inputs(earliest(latest: 1_000_000)),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000 - 20_000, spinUntil: now + 1_000_000, slack: 1,
                precise: true, wakeBy: now + 1_000_000),
            Row(name: "the work at the spin's start (sleeps resumed early) lengthens the learned margin",
                inputs: inputs(earliest(latest: 1_000_000), spinStartWork: 7_000),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000 - 27_000, spinUntil: now + 1_000_000, slack: 1,
                precise: true, wakeBy: now + 1_000_000),
            Row(name: "a test's minimum spin margin wins over a smaller learned one",
                inputs: inputs(earliest(latest: 10_000_000), minimumSpin: 2_000_000),
                clock: cmc_clock_monotonic, sleepUntil: now + 8_000_000, spinUntil: now + 10_000_000, slack: 1,
                precise: true, wakeBy: now + 10_000_000),
            Row(name: "spinning off: sleep to the deadline with 1 ns of slack",
                inputs: inputs(earliest(latest: 1_000_000), spinning: false),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000, spinUntil: .min, slack: 1, precise: true,
                wakeBy: now + 1_000_000),
            Row(name: "leeway to spare: sleep from the deadline with half the affordable slack",
                inputs: inputs(earliest(latest: 3_000_000, leeway: 1_000_000)),
                clock: cmc_clock_monotonic, sleepUntil: now + 2_000_000, spinUntil: .min,
                slack: UInt64((1_000_000 - 30_000) / 2), precise: false, wakeBy: now + 3_000_000),
            Row(name: "leeway under the spin margin still spins, to the deadline",
                inputs: inputs(earliest(latest: 1_010_000, leeway: 10_000)),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000 - 20_000, spinUntil: now + 1_000_000, slack: 1,
                precise: true, wakeBy: now + 1_010_000),
            Row(name: "a deadline already past: spin target in the past, the thread fires at once",
                inputs: inputs(earliest(latest: -5_000)),
                clock: cmc_clock_monotonic, sleepUntil: now - 25_000, spinUntil: now - 5_000, slack: 1, precise: true,
                wakeBy: now - 5_000),
            Row(name: "a wall-clock timer is the most urgent: wait on CLOCK_REALTIME",
                inputs: inputs(earliest(latest: 1_000_000, source: .realtime, realtime: true)),
                clock: cmc_clock_realtime, sleepUntil: wall + 1_000_000 - 20_000, spinUntil: wall + 1_000_000, slack: 1,
                precise: true, wakeBy: now + 1_000_000),
            Row(name: "boottime pending: look again within a second",
                inputs: inputs(earliest(latest: 10_000_000_000, boottime: true)),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000_000, spinUntil: .min, slack: 1, precise: false,
                wakeBy: now + 10_000_000_000),
            Row(name: "wall-clock timers and no watcher: look again within a second",
                inputs: inputs(earliest(latest: 5_000_000_000, realtime: true), watched: false),
                clock: cmc_clock_monotonic, sleepUntil: now + 1_000_000_000, spinUntil: .min, slack: 1, precise: false,
                wakeBy: now + 5_000_000_000),
            Row(name: "wall-clock timers with the watcher: no cap",
                inputs: inputs(earliest(latest: 5_000_000_000, realtime: true)),
                clock: cmc_clock_monotonic, sleepUntil: now + 5_000_000_000 - 20_000, spinUntil: now + 5_000_000_000,
                slack: 1, precise: true, wakeBy: now + 5_000_000_000),
            Row(name: "a deadline near the end of the range saturates, no overflow",
                inputs: inputs(earliest(latest: .max - 10, deadline: .max - 10, leeway: 0)),
                clock: cmc_clock_monotonic, sleepUntil: .max - 20_000, spinUntil: .max, slack: 1, precise: true,
                wakeBy: .max),
        ]
        for row in rows {
            let (plan, wakeBy) = WaitPlan.make(row.inputs)
            XCTAssertEqual(plan.clock, row.clock, row.name)
            XCTAssertEqual(plan.sleepUntil, row.sleepUntil, row.name)
            XCTAssertEqual(plan.spinUntil, row.spinUntil, row.name)
            XCTAssertEqual(plan.slack, row.slack, row.name)
            XCTAssertEqual(plan.precise, row.precise, row.name)
            XCTAssertEqual(wakeBy, row.wakeBy, row.name)
        }
    }

    /// What the spin's start costs is added while spins resume sleeps early:
    /// the second longest of the recent starts (the single worst left out),
    /// capped; a spin that resumes none adds nothing to the next plan.
    func testEarlyResumeCostAddsTheSecondLongestRecentStartWhileSleepsResume() {
        var cost = EarlyResumeCost()
        XCTAssertEqual(cost.work, 0, "nothing measured yet")
        cost.spinStarted(resumedEarly: true, took: 3_000)
        XCTAssertEqual(cost.work, 0, "one start: no second longest yet")
        cost.spinStarted(resumedEarly: true, took: 5_000)
        XCTAssertEqual(cost.work, 3_000)
        cost.spinStarted(resumedEarly: true, took: 90_000)  // one outlier
        XCTAssertEqual(cost.work, 5_000)
        cost.spinStarted(resumedEarly: false, took: 1_000_000)  // not measured: nothing resumed
        XCTAssertEqual(cost.work, 0, "the last spin resumed no sleep")
        cost.spinStarted(resumedEarly: true, took: -4)  // a clock that went nowhere counts as zero
        XCTAssertEqual(cost.work, 5_000)
        // The window forgets: after as many short starts, the old ones are gone.
        for _ in 0..<EarlyResumeCost.window { cost.spinStarted(resumedEarly: true, took: 2_000) }
        XCTAssertEqual(cost.work, 2_000)
        // However long the recent starts, the margin grows by the cap at most.
        for _ in 0..<3 { cost.spinStarted(resumedEarly: true, took: 10_000_000) }
        XCTAssertEqual(cost.work, EarlyResumeCost.cap)
    }
}
