import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import BenchSupport

/// A synthetic `scale` result with `timers` live and a batch of each size in `batches`.
func sampleScale(timers: Int, batches: [Int]) -> ScaleResult {
    var f = ScaleFigures(timers: timers)
    f.schedule = .init(count: timers, seconds: 0.25)
    f.scheduleCancel = .init(count: 1_000_448, seconds: 0.14)
    f.bytes = .init(perTimer: 243.44, uordblks: 192, hblkhd: 51.4)
    f.bytesCapturing = .init(perTimer: 242.3, uordblks: 191, hblkhd: 51.3)
    f.rearm = .init(count: 1_000_000, seconds: 0.5)
    f.rearmFloor = .init(count: 1_000_000, seconds: 0.25)
    f.rearmTwoThreads = .init([.init(count: 900_000, start: 1_000, end: 1_000_000_000),
                               .init(count: 600_000, start: 0, end: 500_000_000)])
    f.rearmSetNextDeadline = .init(count: 1_000_000, seconds: 0.65)
    f.rearmCancelSchedule = .init(count: 1_000_000, seconds: 0.8)
    f.cancelAllNs = 336_561_234
    f.cancelAllFloorNs = 41_250_500
    f.batches = batches.map { .init(timers: $0, lastNs: Int64($0) * 335, firstNs: Int64($0) * 101,
                                    leadNs: 510_000_000, schedulingNs: 204_000_000) }
    f.precise = .init(idle: .init(summary: LatencySummary(p50: 352, p99: 20_000, max: 90_000), calls: 2_000, missed: 0),
                      loaded: .init(summary: LatencySummary(p50: 602, p99: 40_000, max: 120_000), calls: 1_998,
                                    missed: 2),
                      load: .init(count: 1_925_000, seconds: 2.005))
    return ScaleResult(config: ScaleConfig(timers: timers, pairs: 1_000_000, pairBudgetNs: 1_000_000_000,
                                           batches: batches, preciseRounds: 4),
                       figures: f)
}

final class ScaleTests: XCTestCase {
    func results(_ scale: ScaleResult) -> BenchResults {
        var r = sampleResults()
        r.scale = scale
        return r
    }

    /// The scale contender's JSON object.
    func contender(_ scale: ScaleResult) throws -> [String: Any] {
        let r = results(scale)
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try XCTUnwrap(root["scenarios"] as? [[String: Any]])
        let scenario = try XCTUnwrap(scenarios.first { $0["name"] as? String == "scale" })
        return try XCTUnwrap((scenario["contenders"] as? [[String: Any]])?.first)
    }

    func testJSONKeysOfAMillionLive() throws {
        let c = try contender(sampleScale(timers: 1_000_000, batches: [100_000, 1_000_000]))
        for key in ["schedule_cancel_per_s", "bytes_per_timer", "bytes_per_timer_capturing", "rearm_per_s",
                    "rearm_floor_per_s", "cancel_all_floor_ms", "rearm_2threads_per_s", "rearm_set_next_deadline_per_s", "rearm_cancel_schedule_per_s",
                    "cancel_all_ms", "fire_100k_ms", "fire_100k_first_ms", "fire_1m_ms", "fire_1m_first_ms",
                    "precise_p50_ns", "precise_p99_ns", "precise_idle_p50_ns", "precise_idle_p99_ns",
                    "precise_load_rearm_per_s", "timers", "pairs", "name"] {
            XCTAssertNotNil(c[key], key)
        }
        XCTAssertEqual(c["name"] as? String, "TimerScheduler")
        XCTAssertEqual(c["timers"] as? Int, 1_000_000)
        XCTAssertEqual(c["rearm_per_s"] as? Double, 2_000_000)
        // Both threads' re-arms over the time from the first start to the last end.
        XCTAssertEqual(c["rearm_2threads_per_s"] as? Double, 1_500_000)
        XCTAssertEqual(c["bytes_per_timer"] as? Double, 243.4)
        XCTAssertEqual(c["cancel_all_ms"] as? Double, 336.561)
        XCTAssertEqual(c["rearm_floor_per_s"] as? Double, 4_000_000)
        XCTAssertEqual(c["cancel_all_floor_ms"] as? Double, 41.251)
        XCTAssertEqual(c["fire_1m_ms"] as? Double, 335)
        XCTAssertEqual(c["fire_1m_first_ms"] as? Double, 101)
        XCTAssertEqual(c["fire_100k_ms"] as? Double, 33.5)
        XCTAssertEqual(c["precise_p99_ns"] as? Int, 40_000)
        XCTAssertEqual(c["precise_idle_p99_ns"] as? Int, 20_000)
        XCTAssertEqual(c["precise_missed"] as? Int, 2)
    }

    func testQuickRunNamesItsBatchAfterItsSize() throws {
        let c = try contender(sampleScale(timers: 100_000, batches: [100_000]))
        XCTAssertNotNil(c["fire_100k_ms"])
        XCTAssertNotNil(c["fire_100k_first_ms"])
        XCTAssertNil(c["fire_1m_ms"])
        XCTAssertNil(c["fire_1m_first_ms"])
        XCTAssertEqual(ScaleFigures.Key.size(20_000), "20k")
        XCTAssertEqual(ScaleFigures.Key.size(2_000_000), "2m")
        XCTAssertEqual(ScaleFigures.Key.size(1_500), "1500")
    }

    func testTargetsOfAMillionLive() throws {
        let checks = Targets.scale(sampleScale(timers: 1_000_000, batches: [100_000, 1_000_000]))
        XCTAssertEqual(checks.count, 10)
        XCTAssertTrue(checks.allSatisfy { $0.pass != nil && $0.figure != nil })
        func pass(_ name: String) -> Bool? { checks.first { $0.name == name }?.pass }
        XCTAssertEqual(pass("scale: schedule+cancel ≥ 1,000,000/s with 1,000,000 live"), true)
        XCTAssertEqual(pass("scale: re-arm in place ≥ 10,000,000/s with 1,000,000 live"), false)
        XCTAssertEqual(pass("scale: bytes per live timer ≤ 256"), true)
        XCTAssertEqual(pass("scale: bytes per live timer ≤ 96"), false)
        XCTAssertEqual(pass("scale: cancel all 1,000,000 live ≤ 100 ms"), false)
        XCTAssertEqual(pass("scale: fire 100,000 same-instant timers ≤ 50 ms"), true)
        XCTAssertEqual(pass("scale: fire 1,000,000 same-instant timers ≤ 100 ms"), false)
        XCTAssertEqual(pass("scale: first of 1,000,000 same-instant timers ≤ 1 ms"), false)
        XCTAssertEqual(pass("scale: precise 1 kHz timer p50 ≤ 2 µs with 1,000,000 live, under re-arm load"), true)
        // 40 µs under load against 1.5 × 20 µs idle.
        let p99 = try XCTUnwrap(checks.first { $0.figure == "precise_p99_ns" })
        XCTAssertEqual(p99.limit, 30_000)
        XCTAssertEqual(p99.pass, false)
    }

    func testQuickTargetsLeaveTheTotalsUnevaluated() {
        let checks = Targets.scale(sampleScale(timers: 100_000, batches: [100_000]))
        let skipped = checks.filter { $0.pass == nil }
        XCTAssertEqual(Set(skipped.map { $0.figure ?? "" }), ["cancel_all_ms", "fire_1m_ms", "fire_1m_first_ms"])
        XCTAssertTrue(checks.contains { $0.name == "scale: re-arm in place ≥ 10,000,000/s with 100,000 live" })
        XCTAssertTrue(checks.contains { $0.pass == true && $0.figure == "fire_100k_ms" })
    }

    func testABatchThatOverranItsLeadIsNotEvaluated() {
        var s = sampleScale(timers: 1_000_000, batches: [100_000, 1_000_000])
        s.figures.batches[1].schedulingNs = s.figures.batches[1].leadNs + 1
        let check = Targets.scale(s).first { $0.figure == "fire_1m_ms" }
        XCTAssertNil(check?.pass)
        XCTAssertEqual(check?.measured, "not measured (scheduling overran the lead)")
    }

    func testTableShowsEachFigureWithItsTargets() throws {
        let s = sampleScale(timers: 1_000_000, batches: [100_000, 1_000_000])
        let table = try XCTUnwrap(ReportBuilder.scale(s).tables.first)
        XCTAssertEqual(table.header, ["measure", "value", "target", "detail"])
        XCTAssertTrue(table.rows.allSatisfy { $0.count == 4 })
        func target(_ measure: String) -> String? {
            table.rows.first { $0[0].text == measure }?[2].text
        }
        XCTAssertEqual(target("re-arm: OneShotTimer.reschedule(after:)"), "≥ 10.0 M/s FAIL")
        XCTAssertEqual(target("bytes per live timer"), "≤ 256 B PASS; ≤ 96 B FAIL")
        XCTAssertEqual(target("fire 1,000,000 at one instant"), "≤ 100 ms FAIL")
        XCTAssertEqual(target("first of 1,000,000 at one instant"), "≤ 1 ms FAIL")
        XCTAssertEqual(target("cancel all 1,000,000"), "≤ 100 ms FAIL")
        XCTAssertEqual(target("precise 1 kHz timer, under re-arm load: p99"), "≤ 30.0 µs FAIL")
        XCTAssertEqual(target("re-arm: reschedule(after:), 2 threads"), "–")
        let quick = try XCTUnwrap(ReportBuilder.scale(sampleScale(timers: 100_000, batches: [100_000])).tables.first)
        XCTAssertEqual(quick.rows.first { $0[0].text == "cancel all 100,000" }?[2].text, "≤ 100 ms (not evaluated)")
    }

    func testReportsWithScaleAreWellFormed() {
        let r = results(sampleScale(timers: 1_000_000, batches: [100_000, 1_000_000]))
        let md = MarkdownReport.render(r, targets: Targets.evaluate(r))
        XCTAssertTrue(md.contains("## scale"))
        XCTAssertTrue(md.contains("| fire 1,000,000 at one instant | 335.00 ms | ≤ 100 ms FAIL |"))
        let parser = XMLParser(data: Data(SVGReport.render(r).utf8))
        XCTAssertTrue(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))")
    }

    func testRatesOfLoopsThatRanAtOnce() {
        let rate = ScaleFigures.Rate([.init(count: 3, start: 10, end: 1_000_000_010),
                                      .init(count: 1, start: 500_000_010, end: 2_000_000_010)])
        XCTAssertEqual(rate.count, 4)
        XCTAssertEqual(rate.seconds, 2)
        XCTAssertEqual(rate.perSecond, 2)
        XCTAssertEqual(ScaleFigures.Rate(.init(count: 5, start: 0, end: 500_000_000)).perSecond, 10)
    }

    func testThreadsTogetherReturnTheirResultsInOrder() {
        XCTAssertEqual(onThreadsTogether(3, name: "test-together") { $0 * 10 }, [0, 10, 20])
    }
}
