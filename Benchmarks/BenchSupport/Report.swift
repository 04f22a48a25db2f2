//===----------------------------------------------------------------------===//
// Output: the report as sections of tables (one model, rendered as aligned text
// on stdout and as Markdown for --markdown), and the JSON document (schema
// precision-timer-bench/1) for --json.
//===----------------------------------------------------------------------===//
import Foundation

/// Everything one invocation measured.
struct BenchResults: Sendable {
    var environment: BenchEnvironment
    var quick: Bool
    var periodic: PeriodicResult?
    var periodicLoad: PeriodicResult?
    var framelink: PeriodicResult?
    var drift: PeriodicResult?
    var overrun: OverrunResult?
    var clockRead: ClockReadResult?
    var coalescing: CoalescingResult?
    var scale: ScaleResult?
    /// How busy the rest of the machine was, per scenario and overall.
    var load: [String: MachineLoad] = [:]
    var totalLoad: MachineLoad?
    /// Wall time of the whole run.
    var seconds: Double = 0
    /// The command line that produced these results.
    var commandLine = (["bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")

    var warnings: [String] { environment.warnings(load: totalLoad) }

    /// The lateness scenarios that ran, in report order.
    var latencyScenarios: [PeriodicResult] { [periodic, periodicLoad, framelink, drift].compactMap { $0 } }
}

// MARK: - Report model

/// A table whose cells may be marked as the best of their column.
struct ReportTable: Sendable {
    struct Cell: Sendable, ExpressibleByStringLiteral {
        var text: String
        var best = false

        init(_ text: String, best: Bool = false) {
            self.text = text
            self.best = best
        }

        init(stringLiteral value: String) { text = value }
    }

    var header: [String]
    var rows: [[Cell]] = []
    /// Columns that may carry a best mark (rendered with room for it).
    var markable: Set<Int> = []

    init(_ header: [String], markable: Set<Int> = []) {
        self.header = header
        self.markable = markable
    }

    mutating func add(_ row: [Cell]) { rows.append(row) }
    mutating func add(_ row: [String]) { rows.append(row.map { Cell($0) }) }

    /// Marks, in each of `columns`, the row(s) with the lowest `value` (nil: not
    /// comparable). Needs at least two comparable rows.
    mutating func markLowest(column: Int, _ values: [Double?]) {
        markable.insert(column)
        let present = values.compactMap { $0 }.filter { $0.isFinite }
        guard present.count >= 2, let low = present.min() else { return }
        for (r, v) in values.enumerated() where r < rows.count && column < rows[r].count {
            if let v, v == low { rows[r][column].best = true }
        }
    }

    /// Marks the highest instead.
    mutating func markHighest(column: Int, _ values: [Double?]) {
        markLowest(column: column, values.map { $0.map { -$0 } })
    }

    /// Aligned plain text; a best cell gets a trailing `*`.
    func text(indent: String = "  ") -> String {
        var t = TextTable(header.enumerated().map { markable.contains($0.offset) ? $0.element + " " : $0.element })
        for row in rows {
            t.add(row.enumerated().map { i, c in
                markable.contains(i) ? c.text + (c.best ? "*" : " ") : c.text
            })
        }
        return t.render(indent: indent)
    }

    /// A GitHub-flavoured Markdown table; best cells in bold.
    func markdown() -> String {
        func esc(_ s: String) -> String { s.replacingOccurrences(of: "|", with: "\\|") }
        var lines = ["| " + header.map(esc).joined(separator: " | ") + " |"]
        lines.append("|" + header.indices.map { $0 == 0 ? ":---|" : "---:|" }.joined())
        for row in rows {
            let cells = row.map { c in c.best ? "**\(esc(c.text))**" : esc(c.text) }
            let padded = cells + [String](repeating: "", count: Swift.max(0, header.count - cells.count))
            lines.append("| " + padded.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}

/// One scenario's part of the report.
struct ReportSection: Sendable {
    var scenario: String
    var title: String
    var lines: [String] = []
    var tables: [ReportTable] = []
    var notes: [String] = []
}

enum ReportBuilder {
    static func environmentLines(_ r: BenchResults) -> [String] {
        let e = r.environment
        var lines = [
            "kernel \(e.kernel); CPU \(e.cpu), \(e.cores) cores; clocksource \(e.clocksource)",
            "default timer slack \(Fmt.duration(Double(e.timerSlackNs))); realtime priority: \(e.realtime)",
            "build \(e.build)\(r.quick ? " (--quick)" : ""); Swift \(e.swift); glibc \(e.glibc); "
                + "DispatchTime − CLOCK_MONOTONIC \(e.dispatchUptimeOffsetNs) ns",
            "cyclictest: \(e.cyclictest)",
        ]
        if let l = r.totalLoad {
            lines.append("during this run (\(Fmt.fixed(r.seconds, 0)) s): \(l.summary)")
        }
        return lines
    }

    static func sections(_ r: BenchResults) -> [ReportSection] {
        var out: [ReportSection] = []
        func withLoad(_ s: ReportSection) -> ReportSection {
            var s = s
            if let l = r.load[s.scenario] { s.lines.append("machine during \(s.scenario): \(l.summary)") }
            return s
        }
        if let p = r.periodic { out.append(withLoad(periodic(p))) }
        if let p = r.periodicLoad { out.append(withLoad(periodic(p))) }
        if let p = r.framelink { out.append(withLoad(periodic(p))) }
        if let d = r.drift { out.append(withLoad(drift(d))) }
        if let o = r.overrun { out.append(withLoad(overrun(o))) }
        if let c = r.clockRead { out.append(withLoad(clockRead(c))) }
        if let c = r.coalescing { out.append(withLoad(coalescing(c))) }
        if let s = r.scale { out.append(withLoad(scale(s))) }
        return out
    }

    static func ratio(_ a: Int64, _ b: Int64?) -> String {
        guard let b else { return "–" }
        return Fmt.ratio(Double(a) / Double(Swift.max(1, b)))
    }

    static func periodic(_ p: PeriodicResult) -> ReportSection {
        let c = p.config
        let title: String
        var lines: [String] = []
        if c.hogs > 0 {
            title = "\(c.scenario): the \(Fmt.duration(c.intervalNs)) grid while \(c.hogs) CPU-bound threads compete "
                + "for the cores, \(c.rounds) interleaved rounds × \(c.ticks) ticks (+\(c.warmupTicks) warm-up)"
        } else {
            title = "\(c.scenario): drift-free \(Fmt.duration(c.intervalNs)) grid, \(c.rounds) interleaved rounds × "
                + "\(c.ticks) ticks (+\(c.warmupTicks) warm-up) per contender"
        }
        lines.append("lateness = wake − earliest grid deadline it serves; ticks it swallows count as missed")
        lines.append("CPU per tick: (t) the waiting thread's CPU, (p) the whole process's, (c) the child process's")
        let dst = p.figures(Periodic.dispatchSourceName)
        var t = ReportTable(["contender", "ticks", "p50", "p90", "p99", "p99.9", "max", "mean", "early", "missed",
                             "CPU/tick", "CPU", "p50/DST", "p99/DST"])
        var ok: [PeriodicFigures?] = []
        for f in p.contenders {
            if let error = f.error, f.samples == 0 {
                t.add([ReportTable.Cell(f.name), ReportTable.Cell("failed: \(error)")])
                ok.append(nil)
                continue
            }
            ok.append(f)
            let l = f.lateness
            let scope = f.cpuScope == .thread ? "(t)" : f.cpuScope == .child ? "(c)" : "(p)"
            t.add([
                f.name, Fmt.count(f.ticks),
                Fmt.duration(l.p50), Fmt.duration(l.p90), Fmt.duration(l.p99), Fmt.duration(l.p999),
                Fmt.duration(l.max), Fmt.duration(l.mean),
                String(f.early), String(f.missed),
                // Under load the process's CPU is mostly the hogs': only thread and child CPU mean anything.
                c.hogs > 0 && f.cpuScope == .process ? "–" : Fmt.duration(f.cpuNsPerTick) + " " + scope,
                c.hogs > 0 && f.cpuScope == .process ? "–" : Fmt.percent(f.cpuNsPerTick / Double(c.intervalNs)),
                ratio(l.p50, dst?.lateness.p50), ratio(l.p99, dst?.lateness.p99),
            ])
        }
        t.markLowest(column: 2, ok.map { $0.map { Double($0.lateness.p50) } })
        t.markLowest(column: 3, ok.map { $0.map { Double($0.lateness.p90) } })
        t.markLowest(column: 4, ok.map { $0.map { Double($0.lateness.p99) } })
        t.markLowest(column: 5, ok.map { $0.map { Double($0.lateness.p999) } })
        t.markLowest(column: 6, ok.map { $0.map { Double($0.lateness.max) } })
        t.markLowest(column: 7, ok.map { $0.map { $0.lateness.mean } })
        t.markLowest(column: 9, ok.map { $0.map { Double($0.missed) } })
        t.markLowest(column: 10, ok.map { $0.flatMap { c.hogs > 0 && $0.cpuScope == .process ? nil : $0.cpuNsPerTick } })
        var notes: [String] = ["*: best of its column. p50/DST, p99/DST: ratio to DispatchSourceTimer (below 1× is better)."]
        if c.hogs > 0 {
            notes.append("CPU of (p) contenders not shown under load: the process's CPU is mostly the hogs'")
        }
        if c.scenario == Periodic.name {
            notes.append("learned AdaptiveMargin.current after the last round: \(Fmt.duration(p.adaptiveMarginNs)); "
                         + "SleepLead.current (PrecisionClock.sleep aims the kernel's timer this much early and "
                         + "sleeps again if it wakes before the deadline): \(Fmt.duration(p.sleepLeadNs))")
        }
        if p.contenders.contains(where: { $0.name == Periodic.sleepNoLeadName }) {
            notes.append("\(Periodic.sleepNoLeadName): wait(strategy: .hybrid(margin: .zero)), one clock_nanosleep "
                         + "aimed at the deadline with 1 ns timer slack: the kernel's wake-up floor, which "
                         + "PrecisionClock.sleep's lead works against")
        }
        if p.contenders.contains(where: { $0.name == Cyclictest.name }) {
            notes.append("cyclictest: a subprocess per round; its 1 µs histogram buckets are recorded at their middle; "
                         + "early wakes and missed ticks are not reported by it")
        }
        if p.contenders.contains(where: { $0.name == Periodic.foundationTimerName }) {
            notes.append("Foundation.Timer: fire dates are wall-clock Dates (resolution ≈ 0.1 µs); "
                         + "a fire a few hundred ns before the grid counts as early")
        }
        notes += p.notes
        for f in p.contenders {
            if let error = f.error { notes.append("\(f.name): error: \(error)") }
            if f.gridMismatches > 0 {
                notes.append("\(f.name): \(f.gridMismatches) ticks reported a deadline off the drift-free grid")
            }
            if f.earlyByOwnClock > 0 {
                notes.append("\(f.name): \(f.earlyByOwnClock) handler calls ran before their deadline by our own clock read")
            }
            if f.lateness.min < 0 {
                notes.append("\(f.name): earliest wake \(Fmt.duration(f.lateness.min)) before its deadline")
            }
        }
        return ReportSection(scenario: c.scenario, title: title, lines: lines, tables: [t], notes: notes)
    }

    static func drift(_ p: PeriodicResult) -> ReportSection {
        let c = p.config
        let seconds = Double(c.ticks) * Double(c.intervalNs) / 1e9
        let title = "drift: \(Fmt.duration(c.intervalNs)) grid for \(Fmt.fixed(seconds, 0)) s "
            + "(\(Fmt.count(c.ticks)) ticks), contenders concurrently"
        let lines = ["mean lateness per tenth of the run (1st … 10th): flat = no accumulation; "
                     + "final = the last wake's lateness against its grid tick"]
        var t = ReportTable(["contender", "ticks", "missed", "p50", "p99", "max"]
                            + (1...10).map { "t\($0)" } + ["final"])
        var ok: [PeriodicFigures?] = []
        for f in p.contenders {
            if let error = f.error, f.samples == 0 {
                t.add([ReportTable.Cell(f.name), ReportTable.Cell("failed: \(error)")])
                ok.append(nil)
                continue
            }
            ok.append(f)
            let tenths = f.tenthsMeanNs.map { $0.isFinite ? Fmt.duration($0) : "–" }
            t.add([f.name, Fmt.count(f.samples), String(f.missed), Fmt.duration(f.lateness.p50),
                   Fmt.duration(f.lateness.p99), Fmt.duration(f.lateness.max)]
                  + tenths + [f.finalErrorNs.map { Fmt.duration($0) } ?? "–"])
        }
        t.markLowest(column: 3, ok.map { $0.map { Double($0.lateness.p50) } })
        t.markLowest(column: 4, ok.map { $0.map { Double($0.lateness.p99) } })
        t.markLowest(column: 5, ok.map { $0.map { Double($0.lateness.max) } })
        t.markLowest(column: 16, ok.map { $0.flatMap { f in f.finalErrorNs.map { Double(abs($0)) } } })
        return ReportSection(scenario: c.scenario, title: title, lines: lines, tables: [t],
                             notes: ["*: best of its column"] + p.notes)
    }

    static func overrun(_ o: OverrunResult) -> ReportSection {
        let c = o.config
        let title = "overrun: \(Fmt.duration(c.intervalNs)) timer for \(c.ticks) ticks; every \(c.every)th handler "
            + "call takes \(Fmt.duration(c.overrunNs)) (\(Fmt.fixed(Double(c.overrunNs) / Double(c.intervalNs), 1)) "
            + "intervals)"
        let lines = ["missed: as the timer reports it (Tick.missed; Dispatch: data − 1; Foundation.Timer reports "
                     + "nothing: inferred from the grid, marked ~)",
                     "grid: kept when the fires of the run's second half land on start + k × interval "
                     + "(median error < interval/10)"]
        var t = ReportTable(["contender", "fires", "overruns", "missed", "fires+missed", "ticks due", "grid",
                             "median error", "final error", "max error"])
        for f in o.contenders {
            if let error = f.error {
                t.add([ReportTable.Cell(f.name), ReportTable.Cell("failed: \(error)")])
                continue
            }
            t.add([f.name, String(f.fires), String(f.overruns), (f.missedInferred ? "~" : "") + String(f.reportedMissed),
                   String(f.fires + f.reportedMissed), String(f.ticksDue), f.gridText,
                   Fmt.duration(f.medianScheduleErrorNs), Fmt.duration(f.finalScheduleErrorNs),
                   Fmt.duration(f.maxScheduleErrorNs)])
        }
        let ok = o.contenders.map { $0.error == nil ? $0 : nil }
        t.markLowest(column: 7, ok.map { $0.map { Double($0.medianScheduleErrorNs) } })
        t.markLowest(column: 8, ok.map { $0.map { Double(abs($0.finalScheduleErrorNs)) } })
        return ReportSection(scenario: Overrun.name, title: title, lines: lines, tables: [t],
                             notes: ["*: best of its column; .burst fires the missed ticks back to back (fires > ticks "
                                     + "of the others), .delay re-anchors after each late fire (its grid is lost by design)"])
    }

    static func clockRead(_ c: ClockReadResult) -> ReportSection {
        let title = "clock-read: \(Fmt.count(c.config.reads)) reads per trial, min of \(c.config.trials) interleaved trials"
        let base = c.nsPerOp("clock_gettime")
        var t = ReportTable(["clock", "ns/read", "× clock_gettime", "trials (ns/read)"])
        for f in c.contenders {
            t.add([f.name, Fmt.fixed(f.nsPerOp, 2),
                   base.map { Fmt.ratio(f.nsPerOp / $0) } ?? "–",
                   f.trialsNs.map { Fmt.fixed($0, 1) }.joined(separator: " ")])
        }
        t.markLowest(column: 1, c.contenders.map { $0.nsPerOp })
        return ReportSection(scenario: ClockRead.name, title: title, tables: [t], notes: ["*: fastest"])
    }

    static func coalescing(_ c: CoalescingResult) -> ReportSection {
        let cfg = c.config
        let title = "coalescing: \(cfg.timers) repeating timers, periods \(Fmt.duration(cfg.minPeriodNs))–"
            + "\(Fmt.duration(cfg.maxPeriodNs)), \(Fmt.fixed(Double(cfg.durationNs) / 1e9, 1)) s per run"
        let lines = ["wake-ups: TimerScheduler = its thread's wake-ups; DispatchSourceTimer = process context switches"]
        var t = ReportTable(["contender", "leeway", "fires", "early", "> leeway", "within", "missed", "wake-ups/s",
                             "ctx sw/s", "CPU s", "p50", "p99", "max"])
        for f in c.runs {
            t.add([f.name, Fmt.duration(f.leewayNs), Fmt.count(f.fires), String(f.early),
                   Fmt.count(f.lateBeyondLeeway), Fmt.percent(f.withinWindow), Fmt.count(f.missed),
                   Fmt.fixed(f.wakeupsPerSecond, 0), Fmt.fixed(f.contextSwitchesPerSecond, 0),
                   Fmt.fixed(f.cpuSeconds, 3), Fmt.duration(f.lateness.p50), Fmt.duration(f.lateness.p99),
                   Fmt.duration(f.lateness.max)])
        }
        t.markLowest(column: 7, c.runs.map { $0.wakeupsPerSecond })
        t.markLowest(column: 9, c.runs.map { $0.cpuSeconds })
        var r = ReportTable(["leeway", "wake-ups engine/Dispatch", "CPU engine/Dispatch"])
        for leeway in cfg.leewaysNs {
            guard let e = c.run(Coalescing.engineName, leewayNs: leeway),
                  let d = c.run(Coalescing.dispatchName, leewayNs: leeway) else { continue }
            r.add([Fmt.duration(leeway), Fmt.ratio(e.wakeupsPerSecond / d.wakeupsPerSecond),
                   Fmt.ratio(Double(e.cpuNs) / Double(d.cpuNs))])
        }
        return ReportSection(scenario: Coalescing.name, title: title, lines: lines, tables: [t, r],
                             notes: ["*: fewest wake-ups / least CPU; ratios below 1× favour the engine"])
    }

    static func scale(_ s: ScaleResult) -> ReportSection {
        let f = s.figures
        let title = "scale: TimerScheduler with \(Fmt.count(f.timers)) live timers due in 1 hour"
        var t = ReportTable(["measure", "value", "detail"])
        t.add(["schedule+cancel pairs", Fmt.rate(f.scheduleCancelPerSecond),
               "\(Fmt.count(f.pairs)) pairs in \(Fmt.fixed(f.pairSeconds, 3)) s"])
        t.add(["bytes per live timer", Fmt.fixed(f.bytesPerTimer, 1),
               "in-use heap delta over all arenas (malloc_stats) / \(Fmt.count(f.timers)); mallinfo2: uordblks "
               + Fmt.fixed(f.bytesPerTimerUordblks, 1) + " + hblkhd " + Fmt.fixed(f.bytesPerTimerHblkhd, 1)])
        t.add(["fire \(Fmt.count(f.timers)) at one instant", Fmt.fixed(f.fireMs, 2) + " ms",
               "deadline → last handler; first handler \(Fmt.duration(f.firstFireLatenessNs)) late; "
               + "scheduling took \(Fmt.fixed(f.scheduleBatchMs, 1)) ms of a \(Fmt.duration(f.fireLeadNs)) lead"])
        return ReportSection(scenario: Scale.name, title: title, tables: [t])
    }

    static func targets(_ checks: [TargetCheck]) -> ReportTable {
        var t = ReportTable(["target", "measured", "limit", "result"])
        for c in checks {
            t.add([c.name, c.measured, c.limitText, c.pass.map { $0 ? "PASS" : "FAIL" } ?? "SKIP"])
        }
        return t
    }

    static func targetSummary(_ checks: [TargetCheck]) -> String {
        let passed = checks.filter { $0.pass == true }.count
        let failed = checks.filter { $0.pass == false }.count
        let skipped = checks.filter { $0.pass == nil }.count
        // Worded so no CI log reader takes it for a test runner's summary.
        return "targets met: \(passed) of \(passed + failed)\(skipped > 0 ? " (\(skipped) not evaluated)" : "")"
    }
}

// MARK: - Terminal

enum TableReport {
    static func print(_ r: BenchResults) {
        Swift.print("PrecisionTimer benchmark (\(r.environment.build) build\(r.quick ? ", --quick" : ""))")
        for line in ReportBuilder.environmentLines(r) { Swift.print("  " + line) }
        for w in r.warnings { Swift.print("  WARNING: " + w) }
        for s in ReportBuilder.sections(r) {
            Swift.print("\n== \(s.title) ==")
            for line in s.lines { Swift.print(line) }
            for t in s.tables { Swift.print(t.text()) }
            for note in s.notes { Swift.print("  · " + note) }
        }
    }

    static func targets(_ checks: [TargetCheck]) {
        guard !checks.isEmpty else { return }
        Swift.print("\n== targets (from this run's figures) ==")
        Swift.print(ReportBuilder.targets(checks).text())
        Swift.print("  " + ReportBuilder.targetSummary(checks))
    }
}

// MARK: - JSON

struct BenchDocument: Encodable {
    var schema = "precision-timer-bench/1"
    var environment: EnvironmentDoc
    var scenarios: [ScenarioDoc]
    var targets: [TargetDoc]

    enum CodingKeys: String, CodingKey {
        case schema, environment, scenarios, targets
    }

    struct EnvironmentDoc: Encodable {
        var base: BenchEnvironment
        var rounds: Int?
        var ticksPerRound: Int?
        var quick: Bool
        var load: MachineLoad?
        var warnings: [String]
        var seconds: Double

        enum CodingKeys: String, CodingKey {
            case rounds, quick, warnings
            case ticksPerRound = "ticks_per_round"
            case load = "machine_load"
            case seconds = "run_seconds"
        }

        func encode(to encoder: any Encoder) throws {
            try base.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(rounds, forKey: .rounds)
            try c.encodeIfPresent(ticksPerRound, forKey: .ticksPerRound)
            try c.encode(quick, forKey: .quick)
            try c.encodeIfPresent(load, forKey: .load)
            try c.encode(warnings, forKey: .warnings)
            try c.encode((seconds * 10).rounded() / 10, forKey: .seconds)
        }
    }

    enum ScenarioDoc: Encodable {
        case periodic(PeriodicDoc)
        case clockRead(ClockReadDoc)
        case coalescing(CoalescingDoc)
        case scale(ScaleDoc)
        case overrun(OverrunDoc)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .overrun(let d): try d.encode(to: encoder)
            case .periodic(let d): try d.encode(to: encoder)
            case .clockRead(let d): try d.encode(to: encoder)
            case .coalescing(let d): try d.encode(to: encoder)
            case .scale(let d): try d.encode(to: encoder)
            }
        }
    }

    /// periodic-1khz, periodic-1khz-load (with `hogs`) and drift (with the
    /// per-tenth means and final errors, `concurrent` true).
    struct PeriodicDoc: Encodable {
        var name = Periodic.name
        var intervalNs: Int64
        var rounds: Int
        var ticksPerRound: Int
        var warmupTicks: Int
        var adaptiveMarginNs: Int64
        var sleepLeadNs: Int64
        var contenders: [Contender]
        var machineLoad: MachineLoad?
        var hogs: Int = 0
        var concurrent = false
        var notes: [String] = []

        enum CodingKeys: String, CodingKey {
            case name, rounds, contenders, hogs, concurrent, notes
            case machineLoad = "machine_load"
            case adaptiveMarginNs = "adaptive_margin_ns"
            case sleepLeadNs = "sleep_lead_ns"
            case intervalNs = "interval_ns"
            case ticksPerRound = "ticks_per_round"
            case warmupTicks = "warmup_ticks"
        }

        struct Contender: Encodable {
            var name: String
            var ticks: Int
            var early: Int
            var missed: Int
            var latenessNs: LatencySummary
            var cpuNsPerTick: Double
            var cpuScope: String
            var samples: Int
            var gridMismatches: Int
            var earlyByOwnClock: Int
            var error: String?
            var ratioP50ToDispatch: Double?
            var ratioP99ToDispatch: Double?
            var cdf: [CDFPoint]
            var meanLatenessByTenthNs: [Double]?
            var finalScheduleErrorNs: Int64?
            /// Frames dropped (the `framelink` scenario only).
            var dropped: Int?

            enum CodingKeys: String, CodingKey {
                case name, ticks, early, missed, samples, error, cdf, dropped
                case ratioP50ToDispatch = "ratio_p50_to_dispatch"
                case ratioP99ToDispatch = "ratio_p99_to_dispatch"
                case meanLatenessByTenthNs = "mean_lateness_by_tenth_ns"
                case finalScheduleErrorNs = "final_schedule_error_ns"
                case latenessNs = "lateness_ns"
                case cpuNsPerTick = "cpu_ns_per_tick"
                case cpuScope = "cpu_scope"
                case gridMismatches = "grid_mismatches"
                case earlyByOwnClock = "early_by_own_clock"
            }
        }
    }

    struct OverrunDoc: Encodable {
        var name = Overrun.name
        var intervalNs: Int64
        var ticks: Int
        var overrunEvery: Int
        var overrunNs: Int64
        var contenders: [Contender]
        var machineLoad: MachineLoad?

        enum CodingKeys: String, CodingKey {
            case name, ticks, contenders
            case intervalNs = "interval_ns"
            case overrunEvery = "overrun_every"
            case overrunNs = "overrun_ns"
            case machineLoad = "machine_load"
        }

        struct Contender: Encodable {
            var name: String
            var fires: Int
            var overruns: Int
            var missed: Int
            var missedInferred: Bool
            var ticksDue: Int
            var grid: String
            var medianScheduleErrorNs: Int64
            var finalScheduleErrorNs: Int64
            var maxScheduleErrorNs: Int64
            var error: String?

            enum CodingKeys: String, CodingKey {
                case name, fires, overruns, missed, grid, error
                case missedInferred = "missed_inferred"
                case ticksDue = "ticks_due"
                case medianScheduleErrorNs = "median_schedule_error_ns"
                case finalScheduleErrorNs = "final_schedule_error_ns"
                case maxScheduleErrorNs = "max_schedule_error_ns"
            }
        }
    }

    struct ClockReadDoc: Encodable {
        var name = ClockRead.name
        var reads: Int
        var trials: Int
        var contenders: [Contender]
        var machineLoad: MachineLoad?

        enum CodingKeys: String, CodingKey {
            case name, reads, trials, contenders
            case machineLoad = "machine_load"
        }

        struct Contender: Encodable {
            var name: String
            var nsPerOp: Double
            var ratioToClockGettime: Double?
            var trialsNs: [Double]

            enum CodingKeys: String, CodingKey {
                case name
                case nsPerOp = "ns_per_op"
                case ratioToClockGettime = "ratio_to_clock_gettime"
                case trialsNs = "trials_ns_per_op"
            }
        }
    }

    struct CoalescingDoc: Encodable {
        var name = Coalescing.name
        var timers: Int
        var minPeriodNs: Int64
        var maxPeriodNs: Int64
        var durationS: Double
        var contenders: [Contender]
        var machineLoad: MachineLoad?

        enum CodingKeys: String, CodingKey {
            case name, timers, contenders
            case machineLoad = "machine_load"
            case minPeriodNs = "min_period_ns"
            case maxPeriodNs = "max_period_ns"
            case durationS = "duration_s"
        }

        struct Contender: Encodable {
            var name: String
            var leewayNs: Int64
            var fires: Int
            var early: Int
            var lateBeyondLeeway: Int
            var wakeupsPerS: Double
            var cpuS: Double
            var withinWindow: Double
            var missed: Int
            var contextSwitchesPerS: Double
            var seconds: Double
            var latenessNs: LatencySummary

            enum CodingKeys: String, CodingKey {
                case name, fires, early, missed, seconds
                case leewayNs = "leeway_ns"
                case lateBeyondLeeway = "late_beyond_leeway"
                case wakeupsPerS = "wakeups_per_s"
                case cpuS = "cpu_s"
                case withinWindow = "within_window"
                case contextSwitchesPerS = "context_switches_per_s"
                case latenessNs = "lateness_ns"
            }
        }
    }

    struct ScaleDoc: Encodable {
        var name = Scale.name
        var contenders: [Contender]
        var machineLoad: MachineLoad?

        enum CodingKeys: String, CodingKey {
            case name, contenders
            case machineLoad = "machine_load"
        }

        struct Contender: Encodable {
            var name = "TimerScheduler"
            var timers: Int
            var scheduleCancelPerS: Double
            var bytesPerTimer: Double
            var fire100kMs: Double
            var pairs: Int
            var bytesPerTimerUordblks: Double
            var bytesPerTimerHblkhd: Double
            var fireLeadMs: Double
            var firstFireLatenessNs: Int64

            enum CodingKeys: String, CodingKey {
                case name, timers, pairs
                case scheduleCancelPerS = "schedule_cancel_per_s"
                case bytesPerTimer = "bytes_per_timer"
                case fire100kMs = "fire_100k_ms"
                case bytesPerTimerUordblks = "bytes_per_timer_uordblks"
                case bytesPerTimerHblkhd = "bytes_per_timer_hblkhd"
                case fireLeadMs = "fire_lead_ms"
                case firstFireLatenessNs = "first_fire_lateness_ns"
            }
        }
    }

    struct TargetDoc: Encodable {
        var name: String
        var scenario: String
        var value: Double?
        var limit: Double?
        var measured: String
        var limitText: String
        var pass: Bool?

        enum CodingKeys: String, CodingKey {
            case name, scenario, value, limit, measured, pass
            case limitText = "limit_text"
        }
    }

    init(_ r: BenchResults, targets: [TargetCheck]) {
        environment = EnvironmentDoc(base: r.environment, rounds: r.periodic?.config.rounds,
                                     ticksPerRound: r.periodic?.config.ticks, quick: r.quick,
                                     load: r.totalLoad, warnings: r.warnings, seconds: r.seconds)
        var scenarios: [ScenarioDoc] = []
        for p in r.latencyScenarios {
            let dst = p.figures(Periodic.dispatchSourceName)
            func ratio(_ a: Int64, _ b: Int64?) -> Double? {
                guard let b else { return nil }
                return (Double(a) / Double(Swift.max(1, b)) * 1000).rounded() / 1000
            }
            let isDrift = p.config.scenario == Drift.name
            scenarios.append(.periodic(PeriodicDoc(
                name: p.config.scenario,
                intervalNs: p.config.intervalNs, rounds: p.config.rounds, ticksPerRound: p.config.ticks,
                warmupTicks: p.config.warmupTicks, adaptiveMarginNs: p.adaptiveMarginNs, sleepLeadNs: p.sleepLeadNs,
                contenders: p.contenders.map {
                    .init(name: $0.name, ticks: $0.ticks, early: $0.early, missed: $0.missed, latenessNs: $0.lateness,
                          cpuNsPerTick: ($0.cpuNsPerTick * 10).rounded() / 10, cpuScope: $0.cpuScope.rawValue,
                          samples: $0.samples, gridMismatches: $0.gridMismatches,
                          earlyByOwnClock: $0.earlyByOwnClock, error: $0.error,
                          ratioP50ToDispatch: $0.samples > 0 ? ratio($0.lateness.p50, dst?.lateness.p50) : nil,
                          ratioP99ToDispatch: $0.samples > 0 ? ratio($0.lateness.p99, dst?.lateness.p99) : nil,
                          cdf: $0.cdf,
                          meanLatenessByTenthNs: isDrift ? $0.tenthsMeanNs.map { $0.isFinite ? $0.rounded() : 0 } : nil,
                          finalScheduleErrorNs: isDrift ? $0.finalErrorNs : nil,
                          dropped: p.config.scenario == FrameLinkScenario.name ? $0.missed : nil)
                }, machineLoad: r.load[p.config.scenario], hogs: p.config.hogs, concurrent: isDrift,
                notes: p.notes)))
        }
        if let o = r.overrun {
            scenarios.append(.overrun(OverrunDoc(
                intervalNs: o.config.intervalNs, ticks: o.config.ticks, overrunEvery: o.config.every,
                overrunNs: o.config.overrunNs,
                contenders: o.contenders.map {
                    .init(name: $0.name, fires: $0.fires, overruns: $0.overruns, missed: $0.reportedMissed,
                          missedInferred: $0.missedInferred, ticksDue: $0.ticksDue, grid: $0.gridText,
                          medianScheduleErrorNs: $0.medianScheduleErrorNs,
                          finalScheduleErrorNs: $0.finalScheduleErrorNs, maxScheduleErrorNs: $0.maxScheduleErrorNs,
                          error: $0.error)
                }, machineLoad: r.load[Overrun.name])))
        }
        if let c = r.clockRead {
            let base = c.nsPerOp("clock_gettime")
            scenarios.append(.clockRead(ClockReadDoc(
                reads: c.config.reads, trials: c.config.trials,
                contenders: c.contenders.map { f in
                    .init(name: f.name, nsPerOp: (f.nsPerOp * 1000).rounded() / 1000,
                          ratioToClockGettime: base.map { (f.nsPerOp / $0 * 1000).rounded() / 1000 },
                          trialsNs: f.trialsNs.map { ($0 * 1000).rounded() / 1000 })
                }, machineLoad: r.load[ClockRead.name])))
        }
        if let c = r.coalescing {
            scenarios.append(.coalescing(CoalescingDoc(
                timers: c.config.timers, minPeriodNs: c.config.minPeriodNs, maxPeriodNs: c.config.maxPeriodNs,
                durationS: Double(c.config.durationNs) / 1e9,
                contenders: c.runs.map {
                    .init(name: $0.name, leewayNs: $0.leewayNs, fires: $0.fires, early: $0.early,
                          lateBeyondLeeway: $0.lateBeyondLeeway, wakeupsPerS: ($0.wakeupsPerSecond * 10).rounded() / 10,
                          cpuS: ($0.cpuSeconds * 1e6).rounded() / 1e6, withinWindow: $0.withinWindow,
                          missed: $0.missed, contextSwitchesPerS: ($0.contextSwitchesPerSecond * 10).rounded() / 10,
                          seconds: $0.seconds, latenessNs: $0.lateness)
                }, machineLoad: r.load[Coalescing.name])))
        }
        if let s = r.scale {
            let f = s.figures
            scenarios.append(.scale(ScaleDoc(contenders: [.init(
                timers: f.timers, scheduleCancelPerS: f.scheduleCancelPerSecond.rounded(),
                bytesPerTimer: (f.bytesPerTimer * 10).rounded() / 10, fire100kMs: (f.fireMs * 1000).rounded() / 1000,
                pairs: f.pairs, bytesPerTimerUordblks: (f.bytesPerTimerUordblks * 10).rounded() / 10,
                bytesPerTimerHblkhd: (f.bytesPerTimerHblkhd * 10).rounded() / 10, fireLeadMs: Double(f.fireLeadNs) / 1e6,
                firstFireLatenessNs: f.firstFireLatenessNs)], machineLoad: r.load[Scale.name])))
        }
        self.scenarios = scenarios
        self.targets = targets.map {
            TargetDoc(name: $0.name, scenario: $0.scenario, value: $0.value, limit: $0.limit, measured: $0.measured,
                      limitText: $0.limitText, pass: $0.pass)
        }
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    func write(to path: String) throws {
        try encoded().write(to: URL(fileURLWithPath: path))
    }
}
