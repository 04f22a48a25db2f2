import Foundation
import PrecisionTimer
import XCTest
@testable import BenchSupport

/// The check of a scheduler's own statistics against the bench's samples, the
/// `RepeatingTimer.noStats` contender and the `TimerStatistics.record` row.
final class StatisticsCheckTests: XCTestCase {
    func check(p50: (Int64, Int64), p99: (Int64, Int64)) -> StatisticsCheck {
        StatisticsCheck(scheduler: .init(samples: 10, p50: p50.0, p99: p99.0),
                        bench: .init(samples: 10, p50: p50.1, p99: p99.1))
    }

    func testToleranceIsTenPercentOfTheBenchsFigureOr200Nanoseconds() {
        XCTAssertEqual(StatisticsCheck.tolerance(bench: 0), 200)
        XCTAssertEqual(StatisticsCheck.tolerance(bench: 1_000), 200)
        XCTAssertEqual(StatisticsCheck.tolerance(bench: 2_000), 200)
        XCTAssertEqual(StatisticsCheck.tolerance(bench: 3_000), 300)
        XCTAssertEqual(StatisticsCheck.tolerance(bench: 50_000), 5_000)
        XCTAssertEqual(StatisticsCheck.tolerance(bench: -3_000), 300)
    }

    func testAgreementAtTheEdgesOfTheTolerance() {
        let c = check(p50: (1_200, 1_000), p99: (45_000, 50_000))
        XCTAssertEqual(c.difference(.p50), 200)
        XCTAssertEqual(c.difference(.p99), 5_000)
        XCTAssertTrue(c.agrees(.p50))
        XCTAssertTrue(c.agrees(.p99))
        XCTAssertTrue(c.agrees)
        XCTAssertFalse(check(p50: (1_201, 1_000), p99: (50_000, 50_000)).agrees)  // p50 off by 201 ns
        XCTAssertFalse(check(p50: (1_000, 1_000), p99: (55_001, 50_000)).agrees)  // p99 off by 10 % + 1 ns
        XCTAssertTrue(check(p50: (799, 1_000), p99: (50_000, 50_000)).agrees(.p99))
        XCTAssertFalse(check(p50: (799, 1_000), p99: (50_000, 50_000)).agrees(.p50))
    }

    /// Equal figures do not agree when the two sides counted different fires.
    func testDifferentCountsOfFiresDisagree() {
        let c = StatisticsCheck(scheduler: .init(samples: 10, p50: 1_000, p99: 5_000),
                                bench: .init(samples: 9, p50: 1_000, p99: 5_000))
        XCTAssertFalse(c.countsAgree)
        XCTAssertFalse(c.agrees(.p50))
        XCTAssertFalse(c.agrees)
        XCTAssertTrue(c.line(contender: "x").contains(": DISAGREE (allowed: the same count of fires"))
    }

    func testTheLineSaysBothSidesAndTheVerdict() {
        let agreeing = check(p50: (142, 140), p99: (3_900, 3_897)).line(contender: "RepeatingTimer")
        XCTAssertTrue(agreeing.hasPrefix("self-check: RepeatingTimer scheduler p50 142 ns p99 3.90 µs (10 fires) "
                                         + "vs bench p50 140 ns p99 3.90 µs (10 samples)"), agreeing)
        XCTAssertTrue(agreeing.hasSuffix(": agree"), agreeing)
        XCTAssertTrue(check(p50: (2_000, 140), p99: (0, 0)).line(contender: "x").contains(": DISAGREE"))
    }

    /// Rounds are merged on both sides; the two histograms' precisions (2 and
    /// 3 significant digits) keep the same values well within the tolerance.
    func testTheAccumulatorMergesRoundsOnBothSides() {
        var acc = StatisticsCheckAccumulator()
        for round in 0..<2 {
            let samples = (1...500).map { Int64(round * 500 + $0) * 100 }  // 100 ns … 100 µs over both rounds
            var histogram = LatencyHistogram()
            for s in samples { histogram.record(nanoseconds: s) }
            acc.add(scheduler: histogram, bench: samples)
        }
        let c = acc.check
        XCTAssertEqual(c.scheduler.samples, 1_000)
        XCTAssertEqual(c.bench.samples, 1_000)
        XCTAssertEqual(Double(c.bench.p50), 50_000, accuracy: 50)
        XCTAssertEqual(Double(c.bench.p99), 99_000, accuracy: 100)
        XCTAssertTrue(c.scheduler.p50 >= c.bench.p50 && Double(c.scheduler.p50) <= 50_000 * 1.008)
        XCTAssertTrue(c.agrees)
    }

    func testTheNoStatsSchedulerDiffersOnlyInRecordingStatistics() {
        let options = RepeatingTimerSchedulers.options(name: "bench-periodic")
        XCTAssertTrue(options.recording.recordsStatistics)
        XCTAssertFalse(options.notRecording.recordsStatistics)
        var same = options.notRecording
        same.recordsStatistics = true
        XCTAssertEqual(same, options.recording)
        XCTAssertEqual([Periodic.repeatingName, Periodic.repeatingNoStatsName],
                       ["RepeatingTimer", "RepeatingTimer.noStats"])
    }

    /// A short real-time run of both RepeatingTimer contenders: the scheduler
    /// counts exactly the fires the bench counts over the measured rounds
    /// (warm-up left out); the noStats scheduler keeps counts but no lateness,
    /// and is not checked. How close the two sides' values are is a bench
    /// target, judged in a quiet release run; what holds in any build is their
    /// order: the bench reads each fire after the scheduler did, so none of its
    /// percentiles is below the scheduler's, but for the histograms' rounding.
    func testTheSchedulersStatisticsCoverExactlyTheMeasuredFires() async throws {
        let engines = try RepeatingTimerSchedulers(name: "bench-test")
        let contenders = Periodic.baseContenders(engines: engines)
            .filter { [Periodic.repeatingName, Periodic.repeatingNoStatsName].contains($0.name) }
        XCTAssertEqual(contenders.map(\.name), ["RepeatingTimer", "RepeatingTimer.noStats"])
        let result = try await Periodic.run(PeriodicConfig(rounds: 2, ticks: 40, warmupTicks: 15),
                                            contenders: contenders)
        let recording = try XCTUnwrap(result.contenders.first { $0.name == Periodic.repeatingName })
        let check = try XCTUnwrap(recording.statisticsCheck)
        XCTAssertEqual(check.scheduler.samples, recording.samples)
        XCTAssertEqual(check.bench.samples, recording.samples)
        XCTAssertTrue(check.countsAgree, check.line(contender: recording.name))
        for percentile in StatisticsCheck.Percentile.allCases {
            // The scheduler's histogram reports a bucket's highest value, up to
            // 1/128 above the value recorded, and the bench's is within 1/1000 of
            // its own: 1/64 covers both.
            let bench = check.bench[percentile]
            XCTAssertLessThanOrEqual(check.scheduler[percentile], bench + bench / 64 + 1,
                                     "\(percentile): " + check.line(contender: recording.name))
        }
        XCTAssertNil(result.contenders.first { $0.name == Periodic.repeatingNoStatsName }?.statisticsCheck)
        let unrecorded = engines.notRecording.statistics.clock(.monotonic)
        XCTAssertTrue(unrecorded.fires >= 2 * 40 + 15 - unrecorded.missedTicks)
        XCTAssertEqual(unrecorded.lateness.count, 0)
        XCTAssertEqual(engines.notRecording.statistics.handlerTime.count, 0)
    }

    func testRecordValuesStayInTheirRange() {
        var values = ClockRead.RecordValues()
        var low = Int64.max, high = Int64.min
        for _ in 0..<100_000 {
            let v = values.next()
            for x in [v.lateness, v.handler] {
                XCTAssertTrue(ClockRead.RecordValues.range.contains(x), "\(x)")
                low = min(low, x)
                high = max(high, x)
            }
        }
        XCTAssertTrue(low < 100 && high > 49_900, "\(low) … \(high)")
        XCTAssertEqual(ClockRead.RecordValues.scaled(0), 50)
        XCTAssertEqual(ClockRead.RecordValues.scaled(0xFFFF_FFFF), 50_000)
    }

    func testTheRecordLoopRecordsIntoACopy() {
        XCTAssertNotEqual(ClockRead.statisticsRecord(1_000), 0)
        XCTAssertEqual(ClockRead.emptyStatistics.fires, 0)
        XCTAssertEqual(ClockRead.emptyStatistics.clock(.monotonic).lateness.count, 0)
    }

    // MARK: - The report

    /// `sampleResults()` with a `RepeatingTimer` that has a check and a clock-read run.
    func results(check: StatisticsCheck) -> BenchResults {
        var r = sampleResults()
        let periodic = r.periodic!  // sampleResults() has one
        var repeating = periodic.contenders[0]
        repeating.name = Periodic.repeatingName
        repeating.statisticsCheck = check
        r.periodic = PeriodicResult(config: periodic.config, contenders: periodic.contenders + [repeating],
                                    adaptiveMarginNs: 0)
        r.clockRead = ClockReadResult(config: ClockReadConfig(reads: 1_000, trials: 2), contenders: [
            ClockReadFigures(name: "PrecisionClock.now", nsPerOp: 20, trialsNs: [20, 21]),
            ClockReadFigures(name: "clock_gettime", nsPerOp: 20, trialsNs: [20, 20]),
            ClockReadFigures(name: ClockRead.recordName, nsPerOp: 8, trialsNs: [8, 9], readsClock: false),
            ClockReadFigures(name: ClockRead.recordValuesName, nsPerOp: 1.5, trialsNs: [1.5, 1.6], readsClock: false),
        ])
        return r
    }

    func testJsonCarriesTheSchedulersFiguresAndTheRecordRow() throws {
        let r = results(check: check(p50: (142, 140), p99: (3_900, 3_897)))
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try XCTUnwrap(root["scenarios"] as? [[String: Any]])
        let periodic = try XCTUnwrap(scenarios.first { $0["name"] as? String == "periodic-1khz" })
        let contenders = try XCTUnwrap(periodic["contenders"] as? [[String: Any]])
        let repeating = try XCTUnwrap(contenders.first { $0["name"] as? String == "RepeatingTimer" })
        XCTAssertEqual(repeating["stats_p50_ns"] as? Int, 142)
        XCTAssertEqual(repeating["stats_p99_ns"] as? Int, 3_900)
        XCTAssertEqual(repeating["stats_samples"] as? Int, 10)
        XCTAssertNil(contenders[0]["stats_p50_ns"])  // only a contender with a check
        let clockRead = try XCTUnwrap(scenarios.first { $0["name"] as? String == "clock-read" })
        let rows = try XCTUnwrap(clockRead["contenders"] as? [[String: Any]])
        let record = try XCTUnwrap(rows.first { $0["name"] as? String == "TimerStatistics.record" })
        XCTAssertEqual(record["ns_per_op"] as? Double, 8)
        XCTAssertEqual(record["reads_clock"] as? Bool, false)
        XCTAssertNil(record["ratio_to_clock_gettime"])
        XCTAssertEqual(rows[0]["ratio_to_clock_gettime"] as? Double, 1)
        XCTAssertEqual(rows[0]["reads_clock"] as? Bool, true)
    }

    func testTargetsAndTextReport() throws {
        let r = results(check: check(p50: (142, 140), p99: (5_000, 3_897)))
        let checks = Targets.evaluate(r)
        func pass(_ name: String) -> Bool? { checks.first { $0.name == name }?.pass }
        XCTAssertEqual(pass("RepeatingTimer statistics p50 within 10 % or 200 ns of the bench's"), true)
        XCTAssertEqual(pass("RepeatingTimer statistics p99 within 10 % or 200 ns of the bench's"), false)
        XCTAssertEqual(pass("TimerStatistics.record ≤ 20 ns (per fire)"), true)
        let p99 = try XCTUnwrap(checks.first { $0.name.hasPrefix("RepeatingTimer statistics p99") })
        XCTAssertEqual(p99.measured, "scheduler 5.00 µs vs bench 3.90 µs, Δ 1.10 µs")
        XCTAssertEqual(p99.limitText, "≤ 390 ns")
        // Without a RepeatingTimer in a run of its scenario: failed, as missing.
        let none = Targets.evaluate(sampleResults())
        let missing = try XCTUnwrap(none.first { $0.name.hasPrefix("RepeatingTimer statistics p50") })
        XCTAssertEqual(missing.pass, false)
        XCTAssertEqual(missing.measured, "missing: its contender failed or recorded nothing")

        let periodic = ReportBuilder.periodic(try XCTUnwrap(r.periodic))
        XCTAssertTrue(periodic.notes.contains { $0.hasPrefix("self-check: RepeatingTimer scheduler p50 142 ns") })
        let clockRead = ReportBuilder.clockRead(try XCTUnwrap(r.clockRead)).tables[0]
        let record = try XCTUnwrap(clockRead.rows.first { $0[0].text == "TimerStatistics.record" })
        XCTAssertEqual(record[2].text, "n/a")
        XCTAssertFalse(record[1].best)  // the fastest mark is for clock reads
        XCTAssertTrue(clockRead.rows[0][1].best && clockRead.rows[1][1].best)
    }
}
