//===----------------------------------------------------------------------===//
// Output: an aligned table per scenario on stdout, and the JSON document
// (schema precision-timer-bench/1) for --json.
//===----------------------------------------------------------------------===//
import Foundation

/// Everything one invocation measured.
struct BenchResults: Sendable {
    var environment: BenchEnvironment
    var quick: Bool
    var periodic: PeriodicResult?
    var clockRead: ClockReadResult?
    var coalescing: CoalescingResult?
    var scale: ScaleResult?
    /// How busy the rest of the machine was, per scenario and overall.
    var load: [String: MachineLoad] = [:]
    var totalLoad: MachineLoad?
}

// MARK: - Tables

enum TableReport {
    static func print(_ r: BenchResults) {
        let e = r.environment
        Swift.print("""
        PrecisionTimer benchmark (\(e.build) build\(r.quick ? ", --quick" : ""))
          kernel \(e.kernel), \(e.cpu), \(e.cores) cores, clocksource \(e.clocksource)
          default timer slack \(Fmt.duration(Double(e.timerSlackNs))), Swift \(e.swift), glibc \(e.glibc), \
        DispatchTime − CLOCK_MONOTONIC \(e.dispatchUptimeOffsetNs) ns
        """)
        if e.build == "debug" {
            Swift.print("  WARNING: debug build: per-call costs are inflated; use `swift run -c release bench`")
        }
        if let l = r.totalLoad {
            Swift.print("  during this run: \(l.summary)\(l.otherBusyPercent + l.stealPercent > 5 ? "  ← NOISY: figures are unreliable" : "")")
        }
        if let p = r.periodic { periodic(p); loadLine(r, Periodic.name) }
        if let c = r.clockRead { clockRead(c); loadLine(r, ClockRead.name) }
        if let c = r.coalescing { coalescing(c); loadLine(r, Coalescing.name) }
        if let s = r.scale { scale(s); loadLine(r, Scale.name) }
    }

    static func loadLine(_ r: BenchResults, _ scenario: String) {
        guard let l = r.load[scenario] else { return }
        Swift.print("  machine during \(scenario): \(l.summary)")
    }

    static func periodic(_ p: PeriodicResult) {
        let c = p.config
        Swift.print("""

        == periodic-1khz: drift-free \(Fmt.duration(c.intervalNs)) grid, \(c.rounds) interleaved rounds × \
        \(c.ticks) ticks (+\(c.warmupTicks) warm-up) per contender ==
        lateness = wake − deadline; CPU per tick: thread CPU for blocking waits, process CPU otherwise
        """)
        let dst = p.figures(Periodic.dispatchSourceName)
        var t = TextTable(["contender", "ticks", "p50", "p90", "p99", "p99.9", "max", "mean", "early", "missed",
                           "CPU/tick", "CPU", "p50/DST", "p99/DST"])
        for f in p.contenders {
            if let error = f.error, f.samples == 0 {
                t.add([f.name, "failed: \(error)"])
                continue
            }
            let l = f.lateness
            t.add([
                f.name, Fmt.count(f.ticks),
                Fmt.duration(l.p50), Fmt.duration(l.p90), Fmt.duration(l.p99), Fmt.duration(l.p999),
                Fmt.duration(l.max), Fmt.duration(l.mean),
                String(f.early), String(f.missed),
                Fmt.duration(f.cpuNsPerTick) + " " + (f.cpuScope == .thread ? "(t)" : "(p)"),
                Fmt.percent(f.cpuNsPerTick / Double(c.intervalNs)),
                dst.map { Fmt.ratio(Double(l.p50) / Double(Swift.max(1, $0.lateness.p50))) } ?? "–",
                dst.map { Fmt.ratio(Double(l.p99) / Double(Swift.max(1, $0.lateness.p99))) } ?? "–",
            ])
        }
        Swift.print(t.render())
        Swift.print("  CPU column: share of one core; (t) thread CPU of the waiting thread, (p) process CPU.")
        Swift.print("  learned AdaptiveMargin.current after the last round (each wait also caps its spin at AdaptiveMargin.spinBudget of its length): \(Fmt.duration(p.adaptiveMarginNs))")
        for f in p.contenders {
            if let error = f.error { Swift.print("  ! \(f.name): error: \(error)") }
            if f.gridMismatches > 0 {
                Swift.print("  ! \(f.name): \(f.gridMismatches) ticks reported a deadline off the drift-free grid")
            }
            if f.earlyByOwnClock > 0 {
                Swift.print("  ! \(f.name): \(f.earlyByOwnClock) handler calls ran before their deadline by our own clock read")
            }
            if f.lateness.min < 0 {
                Swift.print("  ! \(f.name): earliest wake \(Fmt.duration(f.lateness.min)) before its deadline")
            }
        }
    }

    static func clockRead(_ c: ClockReadResult) {
        Swift.print("""

        == clock-read: \(Fmt.count(c.config.reads)) reads per trial, min of \(c.config.trials) interleaved trials ==
        """)
        let base = c.nsPerOp("clock_gettime")
        var t = TextTable(["clock", "ns/read", "× clock_gettime", "trials (ns/read)"])
        for f in c.contenders {
            t.add([f.name, Fmt.fixed(f.nsPerOp, 2),
                   base.map { Fmt.ratio(f.nsPerOp / $0) } ?? "–",
                   f.trialsNs.map { Fmt.fixed($0, 1) }.joined(separator: " ")])
        }
        Swift.print(t.render())
    }

    static func coalescing(_ c: CoalescingResult) {
        let cfg = c.config
        Swift.print("""

        == coalescing: \(cfg.timers) repeating timers, periods \(Fmt.duration(cfg.minPeriodNs))–\
        \(Fmt.duration(cfg.maxPeriodNs)), \(Fmt.fixed(Double(cfg.durationNs) / 1e9, 1)) s per run ==
        wake-ups: TimerScheduler = its thread's wake-ups; DispatchSourceTimer = process context switches
        """)
        var t = TextTable(["contender", "leeway", "fires", "early", "> leeway", "within", "missed", "wake-ups/s",
                           "ctx sw/s", "CPU s", "p50", "p99", "max"])
        for f in c.runs {
            t.add([f.name, Fmt.duration(f.leewayNs), Fmt.count(f.fires), String(f.early),
                   Fmt.count(f.lateBeyondLeeway), Fmt.percent(f.withinWindow), Fmt.count(f.missed),
                   Fmt.fixed(f.wakeupsPerSecond, 0), Fmt.fixed(f.contextSwitchesPerSecond, 0),
                   Fmt.fixed(f.cpuSeconds, 3), Fmt.duration(f.lateness.p50), Fmt.duration(f.lateness.p99),
                   Fmt.duration(f.lateness.max)])
        }
        Swift.print(t.render())
        var r = TextTable(["leeway", "wake-ups engine/Dispatch", "CPU engine/Dispatch"])
        for leeway in cfg.leewaysNs {
            guard let e = c.run(Coalescing.engineName, leewayNs: leeway),
                  let d = c.run(Coalescing.dispatchName, leewayNs: leeway) else { continue }
            r.add([Fmt.duration(leeway), Fmt.ratio(e.wakeupsPerSecond / d.wakeupsPerSecond),
                   Fmt.ratio(Double(e.cpuNs) / Double(d.cpuNs))])
        }
        Swift.print(r.render())
    }

    static func scale(_ s: ScaleResult) {
        let f = s.figures
        Swift.print("""

        == scale: TimerScheduler with \(Fmt.count(f.timers)) live timers due in 1 hour ==
        """)
        var t = TextTable(["measure", "value", "detail"])
        t.add(["schedule+cancel pairs", Fmt.rate(f.scheduleCancelPerSecond),
               "\(Fmt.count(f.pairs)) pairs in \(Fmt.fixed(f.pairSeconds, 3)) s"])
        t.add(["bytes per live timer", Fmt.fixed(f.bytesPerTimer, 1),
               "in-use heap delta over all arenas (malloc_stats) / \(Fmt.count(f.timers)); mallinfo2: uordblks "
               + Fmt.fixed(f.bytesPerTimerUordblks, 1) + " + hblkhd " + Fmt.fixed(f.bytesPerTimerHblkhd, 1)])
        t.add(["fire \(Fmt.count(f.timers)) at one instant", Fmt.fixed(f.fireMs, 2) + " ms",
               "deadline → last handler; first handler \(Fmt.duration(f.firstFireLatenessNs)) late; "
               + "scheduling took \(Fmt.fixed(f.scheduleBatchMs, 1)) ms of a \(Fmt.duration(f.fireLeadNs)) lead"])
        Swift.print(t.render())
    }

    static func targets(_ checks: [TargetCheck]) {
        Swift.print("\n== targets (from this run's figures) ==")
        var t = TextTable(["target", "measured", "limit", "result"])
        for c in checks {
            t.add([c.name, c.measured, c.limitText, c.pass.map { $0 ? "PASS" : "FAIL" } ?? "SKIP"])
        }
        Swift.print(t.render())
        let passed = checks.filter { $0.pass == true }.count
        let failed = checks.filter { $0.pass == false }.count
        let skipped = checks.filter { $0.pass == nil }.count
        Swift.print("  \(passed) passed, \(failed) failed\(skipped > 0 ? ", \(skipped) skipped" : "")")
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

        enum CodingKeys: String, CodingKey {
            case rounds, quick
            case ticksPerRound = "ticks_per_round"
            case load = "machine_load"
        }

        func encode(to encoder: any Encoder) throws {
            try base.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(rounds, forKey: .rounds)
            try c.encodeIfPresent(ticksPerRound, forKey: .ticksPerRound)
            try c.encode(quick, forKey: .quick)
            try c.encodeIfPresent(load, forKey: .load)
        }
    }

    enum ScenarioDoc: Encodable {
        case periodic(PeriodicDoc)
        case clockRead(ClockReadDoc)
        case coalescing(CoalescingDoc)
        case scale(ScaleDoc)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .periodic(let d): try d.encode(to: encoder)
            case .clockRead(let d): try d.encode(to: encoder)
            case .coalescing(let d): try d.encode(to: encoder)
            case .scale(let d): try d.encode(to: encoder)
            }
        }
    }

    struct PeriodicDoc: Encodable {
        var name = Periodic.name
        var intervalNs: Int64
        var rounds: Int
        var ticksPerRound: Int
        var warmupTicks: Int
        var adaptiveMarginNs: Int64
        var contenders: [Contender]
        var machineLoad: MachineLoad?

        enum CodingKeys: String, CodingKey {
            case name, rounds, contenders
            case machineLoad = "machine_load"
            case adaptiveMarginNs = "adaptive_margin_ns"
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

            enum CodingKeys: String, CodingKey {
                case name, ticks, early, missed, samples, error
                case latenessNs = "lateness_ns"
                case cpuNsPerTick = "cpu_ns_per_tick"
                case cpuScope = "cpu_scope"
                case gridMismatches = "grid_mismatches"
                case earlyByOwnClock = "early_by_own_clock"
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
                                     load: r.totalLoad)
        var scenarios: [ScenarioDoc] = []
        if let p = r.periodic {
            scenarios.append(.periodic(PeriodicDoc(
                intervalNs: p.config.intervalNs, rounds: p.config.rounds, ticksPerRound: p.config.ticks,
                warmupTicks: p.config.warmupTicks, adaptiveMarginNs: p.adaptiveMarginNs,
                contenders: p.contenders.map {
                    .init(name: $0.name, ticks: $0.ticks, early: $0.early, missed: $0.missed, latenessNs: $0.lateness,
                          cpuNsPerTick: ($0.cpuNsPerTick * 10).rounded() / 10, cpuScope: $0.cpuScope.rawValue,
                          samples: $0.samples, gridMismatches: $0.gridMismatches,
                          earlyByOwnClock: $0.earlyByOwnClock, error: $0.error)
                }, machineLoad: r.load[Periodic.name])))
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

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(self)
        try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: path))
    }
}
