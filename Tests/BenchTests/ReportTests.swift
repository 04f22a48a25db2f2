import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import BenchSupport

/// A synthetic run with every scenario that has a writer of its own.
func sampleResults() -> BenchResults {
    let env = BenchEnvironment(kernel: "6.1.0", cpu: "Test CPU <&>", cores: 2, clocksource: "hpet",
                               timerSlackNs: 50_000, build: "release", swift: "6.3", glibc: "2.36",
                               dispatchUptimeOffsetNs: 0, boottimeOffsetNs: 0, realtime: "granted (SCHED_FIFO 80)",
                               cyclictest: "not installed")
    func figures(_ name: String, scale: Int64, scope: PeriodicContender.CPUScope = .process) -> PeriodicFigures {
        var acc = LatenessAccumulator()
        var raw: [Int64] = []
        for i in 0..<1_000 {
            let v = scale + Int64(i) * scale / 100
            raw.append(v)
            acc.add(v, missedAbove: .max)
        }
        var f = PeriodicFigures(name: name, cpuScope: scope)
        f.ticks = 1_000
        f.samples = acc.samples
        f.lateness = acc.summary
        f.cdf = acc.cdf
        f.raw = raw
        f.cpuNsPerTick = Double(scale)
        f.meanLatenessByTenthNs = Distribution.sliceMeans(raw)
        f.finalScheduleErrorNs = raw.last
        return f
    }
    let names = ["PrecisionClock.wait(.adaptive)", "DispatchSourceTimer", "Foundation.Timer", "Task.sleep, \"quoted\""]
    let contenders = names.enumerated().map { figures($1, scale: Int64(1_000 * ($0 + 1)), scope: .thread) }
    var failed = PeriodicFigures(name: "cyclictest", cpuScope: .child)
    failed.error = "cyclictest exited with status 1"
    var r = BenchResults(environment: env, quick: true)
    r.periodic = PeriodicResult(config: PeriodicConfig(rounds: 2, ticks: 500, warmupTicks: 10),
                                contenders: contenders + [failed], adaptiveMarginNs: 20_000, sleepLeadNs: 18_000)
    r.periodicLoad = PeriodicResult(config: PeriodicConfig(rounds: 2, ticks: 500, warmupTicks: 10,
                                                           scenario: "periodic-1khz-load", hogs: 2),
                                    contenders: contenders, notes: ["2 hogs"], adaptiveMarginNs: 20_000)
    r.drift = PeriodicResult(config: PeriodicConfig(rounds: 1, ticks: 1_000, warmupTicks: 0, intervalNs: 10_000_000,
                                                    scenario: "drift"),
                             contenders: contenders, adaptiveMarginNs: 0)
    var kept = OverrunFigures(name: "RepeatingTimer.skip", fires: 190, overruns: 9, reportedMissed: 10, ticksDue: 200)
    kept.grid = .kept
    let lost = OverrunFigures(name: "RepeatingTimer.delay", fires: 180, overruns: 9, ticksDue: 200,
                              grid: .lostByDesign, finalScheduleErrorNs: 135_000_000)
    r.overrun = OverrunResult(config: OverrunConfig(ticks: 200), contenders: [kept, lost])
    r.totalLoad = MachineLoad(otherBusyPercent: 9, stealPercent: 1)
    r.seconds = 12
    return r
}

final class ReportTests: XCTestCase {
    func testJsonDocumentShape() throws {
        let r = sampleResults()
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(root["schema"] as? String, "precision-timer-bench/1")
        let env = try XCTUnwrap(root["environment"] as? [String: Any])
        for key in ["kernel", "cpu", "cores", "clocksource", "timer_slack_ns", "build", "swift", "realtime",
                    "cyclictest", "warnings", "quick", "machine_load"] {
            XCTAssertTrue(env[key] != nil, "environment.\(key)")
        }
        XCTAssertEqual((env["warnings"] as? [String])?.count, 2)  // hpet clocksource, noisy run
        let scenarios = try XCTUnwrap(root["scenarios"] as? [[String: Any]])
        XCTAssertTrue(scenarios.compactMap { $0["name"] as? String }
            == ["periodic-1khz", "periodic-1khz-load", "drift", "overrun"])
        let periodic = scenarios[0]
        XCTAssertEqual(periodic["adaptive_margin_ns"] as? Int, 20_000)
        XCTAssertEqual(periodic["sleep_lead_ns"] as? Int, 18_000)
        let contenders = try XCTUnwrap(periodic["contenders"] as? [[String: Any]])
        XCTAssertEqual(contenders.count, 5)
        let hybrid = contenders[0]
        for key in ["lateness_ns", "cdf", "ratio_p50_to_dispatch", "ratio_p99_to_dispatch", "cpu_ns_per_tick",
                    "missed", "early", "ticks"] {
            XCTAssertTrue(hybrid[key] != nil, "contender.\(key)")
        }
        XCTAssertEqual(hybrid["ratio_p50_to_dispatch"] as? Double, 0.5)
        XCTAssertTrue(contenders[4]["error"] as? String != nil)
        XCTAssertEqual((scenarios[1]["hogs"] as? Int), 2)
        let drift = try XCTUnwrap(scenarios[2]["contenders"] as? [[String: Any]])
        XCTAssertEqual((drift[0]["mean_lateness_by_tenth_ns"] as? [Double])?.count, 10)
        XCTAssertTrue(drift[0]["final_schedule_error_ns"] as? Int != nil)
        let overrun = try XCTUnwrap(scenarios[3]["contenders"] as? [[String: Any]])
        XCTAssertTrue(overrun.map { $0["grid"] as? String } == ["kept", "lost (by design)"])
        XCTAssertTrue(root["targets"] as? [Any] != nil)
    }

    func testJSONKeysAreSnakeCase() throws {
        let r = sampleResults()
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        var keys = Set<String>()
        func walk(_ v: Any) {
            if let d = v as? [String: Any] {
                for (k, x) in d { keys.insert(k); walk(x) }
            } else if let a = v as? [Any] {
                a.forEach(walk)
            }
        }
        walk(try JSONSerialization.jsonObject(with: data))
        XCTAssertTrue(keys.isSuperset(of: ["ticks_per_round", "run_seconds", "timer_slack_ns", "value_ns",
                                           "other_busy_pct", "limit_text", "overrun_every", "missed_inferred"]))
        XCTAssertEqual(keys.filter { $0.contains(where: \.isUppercase) }, [])
    }

    func testContenderNamesSayWhichAPITheyMeasure() {
        XCTAssertEqual([Periodic.sleepName, Periodic.sleepNoLeadName, Periodic.adaptiveName, Periodic.spinName,
                        Periodic.asyncSleepName],
                       ["PrecisionClock.wait(.sleep)", "PrecisionClock.wait(.sleep).noLead",
                        "PrecisionClock.wait(.adaptive)", "PrecisionClock.wait(.spin)", "PrecisionClock.sleep(until:)"])
        XCTAssertEqual([NIOTimers.scheduleTaskName, NIOTimers.repeatedTaskName],
                       ["NIO.scheduleTask", "NIO.scheduleRepeatedTask"])
        let targets = Targets.evaluate(sampleResults()).map(\.name)
        XCTAssertTrue(targets.contains("PrecisionClock.wait(.adaptive) p50 ≤ 1 µs"))
        XCTAssertTrue(targets.contains("PrecisionClock.sleep(until:): zero early wakes"))
        XCTAssertFalse(targets.contains { $0.contains("hybrid") || $0.contains("asyncSleep") })
    }

    func testMarkdownHasEnvironmentAndEveryContender() {
        let r = sampleResults()
        let md = MarkdownReport.render(r, targets: Targets.evaluate(r))
        XCTAssertTrue(md.hasPrefix("# PrecisionTimer benchmark report"))
        XCTAssertTrue(md.contains("## Environment"))
        XCTAssertTrue(md.contains("clocksource hpet"))
        XCTAssertTrue(md.contains("> **Warning:** clocksource is hpet"))
        for section in ["## periodic-1khz", "## periodic-1khz-load", "## drift", "## overrun", "## Targets"] {
            XCTAssertTrue(md.contains(section), "\(section)")
        }
        for name in ["PrecisionClock.wait(.adaptive)", "DispatchSourceTimer", "Foundation.Timer", "cyclictest",
                     "RepeatingTimer.skip", "RepeatingTimer.delay"] {
            XCTAssertTrue(md.contains("| \(name)") || md.contains("| **\(name)"), "\(name)")
        }
        // Every table row has as many cells as its header.
        for block in md.components(separatedBy: "\n\n") where block.hasPrefix("| ") {
            let rows = block.split(separator: "\n")
            let columns = rows[0].filter { $0 == "|" }.count
            for row in rows {
                XCTAssertTrue(row.replacingOccurrences(of: "\\|", with: "").filter { $0 == "|" }.count == columns)
            }
        }
        XCTAssertTrue(md.contains("| PrecisionClock.wait(.adaptive) | 1,000 | **5.99 µs** |"))  // the best p50 of its column
    }

    func testSvgIsWellFormedAndNamesEveryContender() throws {
        let r = sampleResults()
        let svg = SVGReport.render(r)
        XCTAssertTrue(svg.hasPrefix("<?xml"))
        XCTAssertTrue(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        let parser = XMLParser(data: Data(svg.utf8))
        XCTAssertTrue(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))")
        for name in ["PrecisionClock.wait(.adaptive)", "DispatchSourceTimer", "Foundation.Timer", "Task.sleep, &quot;quoted&quot;",
                     "RepeatingTimer.skip", "RepeatingTimer.delay", "Test CPU &lt;&amp;&gt;"] {
            XCTAssertTrue(svg.contains(name), "\(name)")
        }
        // One CDF polyline per contender with samples, in each of the three lateness panels.
        XCTAssertEqual(svg.components(separatedBy: "<polyline").count - 1, 12)
        // The CDF legend: one entry per contender with samples in each lateness panel.
        XCTAssertEqual(svg.components(separatedBy: "<g class=\"legend\">").count - 1, 12)
        XCTAssertTrue(svg.contains("class=\"label\">PrecisionClock.wait(.adaptive)</text></g>"))
        for title in ["periodic-1khz:", "periodic-1khz-load:", "drift:", "overrun:"] {
            XCTAssertTrue(svg.contains(">" + title), "\(title)")
        }
    }

    func testCsvHasOneRowPerSample() throws {
        let r = sampleResults()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-csv-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try CSVReport.write(r, to: dir)
        XCTAssertTrue(files.map { ($0 as NSString).lastPathComponent }
            == ["periodic-1khz.csv", "periodic-1khz-load.csv", "drift.csv", "overrun.csv"])
        let text = try String(contentsOfFile: files[0], encoding: .utf8)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.first, "contender,sample,lateness_ns")
        XCTAssertEqual(lines.count, 1 + 4 * 1_000)
        XCTAssertTrue(lines.contains("\"Task.sleep, \"\"quoted\"\"\",0,4000"))
    }

    func testTerminalTableMarksTheBest() {
        var t = ReportTable(["name", "value"])
        t.add(["a", "3"])
        t.add(["b", "1"])
        t.markLowest(column: 1, [3, 1])
        let text = t.text()
        XCTAssertTrue(text.contains("1*"))
        XCTAssertTrue(!text.contains("3*"))
        XCTAssertTrue(t.markdown().contains("| b | **1** |"))
    }
}

/// cyclictest reports neither early wakes nor missed ticks: its row says so.
final class CyclictestRowTests: XCTestCase {
    func testTheChildProcessRowSaysNotAvailableForEarlyAndMissed() throws {
        let r = sampleResults()
        let periodic = try XCTUnwrap(r.periodic)
        var cyclictest = periodic.contenders[0]
        cyclictest.name = Cyclictest.fifoName
        cyclictest.cpuScope = .child
        let withRow = PeriodicResult(config: periodic.config, contenders: periodic.contenders + [cyclictest],
                                     adaptiveMarginNs: 0)
        let table = ReportBuilder.periodic(withRow).tables[0]
        let row = try XCTUnwrap(table.rows.first { $0[0].text == Cyclictest.fifoName })
        XCTAssertEqual(row[8].text, "n/a")
        XCTAssertEqual(row[9].text, "n/a")
        XCTAssertFalse(row[9].best)  // unknown is not the fewest
        let ours = try XCTUnwrap(table.rows.first { $0[0].text == periodic.contenders[0].name })
        XCTAssertEqual(ours[9].text, "0")
        XCTAssertTrue(ours[9].best)
    }
}

/// A figure that is not a number reaches the JSON as a string saying so.
final class NonFiniteFigureTests: XCTestCase {
    func testANaNFigureIsWrittenAsNaNNotZeroAndTheReportIsStillWritten() throws {
        var r = sampleResults()
        r.clockRead = ClockReadResult(config: ClockReadConfig(reads: 1_000, trials: 2), contenders: [
            ClockReadFigures(name: "PrecisionClock.now", nsPerOp: .nan, trialsNs: [.nan, 20]),
            ClockReadFigures(name: "clock_gettime", nsPerOp: 20, trialsNs: [20, 20]),
        ])
        let checks = Targets.evaluate(r)
        let now = try XCTUnwrap(checks.first { $0.name == "PrecisionClock.now ≤ 1.1× clock_gettime" })
        XCTAssertEqual(now.pass, false)  // NaN meets no target
        let data = try BenchDocument(r, targets: checks).encoded()
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try XCTUnwrap(root["scenarios"] as? [[String: Any]])
        let clockRead = try XCTUnwrap(scenarios.first { $0["name"] as? String == "clock-read" })
        let rows = try XCTUnwrap(clockRead["contenders"] as? [[String: Any]])
        XCTAssertEqual(rows[0]["ns_per_op"] as? String, "nan")
        let targets = try XCTUnwrap(root["targets"] as? [[String: Any]])
        let target = try XCTUnwrap(targets.first { $0["name"] as? String == "PrecisionClock.now ≤ 1.1× clock_gettime" })
        XCTAssertEqual(target["value"] as? String, "nan")
    }
}
