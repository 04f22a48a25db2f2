//===----------------------------------------------------------------------===//
// The `bench` command: `swift run -c release bench [scenario…] [--quick]
// [--check] [--json FILE] [--markdown FILE] [--csv DIR] [--svg FILE]
// [--rounds N] [--ticks N]`. It lives in BenchSupport so that BenchTests can
// test its parsing; the `bench` executable only calls `Bench.main()`.
//===----------------------------------------------------------------------===//
import ArgumentParser
import Foundation
import PrecisionTimer

public enum ScenarioName: String, CaseIterable, ExpressibleByArgument, Sendable {
    case periodic = "periodic-1khz"
    case periodicLoad = "periodic-1khz-load"
    case drift
    case overrun
    case framelink
    case clockRead = "clock-read"
    case coalescing
    case scale
}

public struct Bench: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measures PrecisionTimer against Dispatch, Task.sleep, Foundation's Timer, SwiftNIO's timers, "
            + "the raw syscalls and (when installed) cyclictest.",
        discussion: """
        Scenarios: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", ")) (default: all). \
        Contenders are interleaved in rounds so machine noise hits each alike. \
        Build with -c release: a debug build inflates per-call costs. \
        The default run takes about three minutes on a 2-core machine; --quick under 40 seconds.

        The last line is the verdict: every target met, or how many were missed and \
        whether to blame the machine (a noisy run: other processes and hypervisor steal \
        above \(Fmt.fixed(MachineLoad.noisyAbovePercent, 0)) % of the machine; or a debug \
        build) or the library (a quiet machine and a release build; after --quick, to be \
        confirmed by a full run). \
        Exit status: 0 after a full report, whatever the targets; with --check, 1 when \
        any target is missed, on a noisy machine or in a debug build too (a target is a \
        target; the verdict says what to make of the miss).
        """)

    @Argument(help: "Scenarios to run (default: all).")
    public var scenarios: [ScenarioName] = []

    @Flag(help: "A smoke run of under 40 seconds: fewer rounds and ticks, short drift/overrun/coalescing runs, 100,000 live timers for scale.")
    public var quick = false

    @Flag(help: "Exit with status 1 when a target is missed, even on a noisy machine (the verdict line says so).")
    public var check = false

    @Option(name: .customLong("json"), help: ArgumentHelp("Also write the results as JSON to this file.",
                                                          valueName: "file"))
    public var jsonPath: String?

    @Option(name: .customLong("markdown"),
            help: ArgumentHelp("Also write a Markdown report (environment and tables) to this file.",
                               valueName: "file"))
    public var markdownPath: String?

    @Option(name: .customLong("csv"),
            help: ArgumentHelp("Also write the raw per-tick lateness of every contender (one CSV file per scenario) into this directory.",
                               valueName: "dir"))
    public var csvDirectory: String?

    @Option(name: .customLong("svg"),
            help: ArgumentHelp("Also write plots (lateness CDF and histogram per scenario) as SVG to this file.",
                               valueName: "file"))
    public var svgPath: String?

    @Option(help: "Interleaved rounds of periodic-1khz (default 8, --quick 3).")
    public var rounds: Int?

    @Option(help: "Ticks per contender per round of periodic-1khz (default 500, --quick 150).")
    public var ticks: Int?

    @Option(help: "Warm-up ticks per contender before the rounds (default 100, --quick 50).")
    public var warmup: Int?

    @Option(name: .customLong("drift-seconds"), help: "Length of the drift run in seconds (default 20, --quick 3; 60 for a longer look).")
    public var driftSeconds: Double?

    @Flag(name: .customLong("no-cyclictest"), help: "Leave cyclictest out even when it is installed.")
    public var noCyclictest = false

    public init() {}

    public mutating func validate() throws {
        if let rounds, rounds < 1 { throw ValidationError("--rounds must be at least 1") }
        if let ticks, ticks < 1 { throw ValidationError("--ticks must be at least 1") }
        if let warmup, warmup < 0 { throw ValidationError("--warmup must not be negative") }
        if let driftSeconds, !(driftSeconds >= 0.1 && driftSeconds <= 3_600) {
            throw ValidationError("--drift-seconds must be between 0.1 and 3600")
        }
    }

    /// The scenarios this invocation runs, in the order they run.
    var selected: [ScenarioName] {
        let chosen = Set(scenarios.isEmpty ? ScenarioName.allCases : scenarios)
        return ScenarioName.allCases.filter { chosen.contains($0) }
    }

    var periodicConfig: PeriodicConfig {
        PeriodicConfig(rounds: rounds ?? (quick ? 3 : 8), ticks: ticks ?? (quick ? 150 : 500),
                       warmupTicks: warmup ?? (quick ? 50 : 100))
    }

    var loadConfig: PeriodicConfig {
        PeriodicConfig(rounds: quick ? 2 : 3, ticks: quick ? 100 : 300, warmupTicks: quick ? 20 : 50,
                       scenario: ScenarioName.periodicLoad.rawValue, hogs: 2)
    }

    var framelinkConfig: PeriodicConfig {
        PeriodicConfig(rounds: quick ? 2 : 3, ticks: quick ? 60 : 120, warmupTicks: quick ? 10 : 20,
                       intervalNs: FrameLinkScenario.period(fps: 60), scenario: FrameLinkScenario.name)
    }

    var driftConfig: DriftConfig {
        let seconds = driftSeconds ?? (quick ? 3 : 20)
        return DriftConfig(ticks: Swift.max(10, Int(seconds * 100)))
    }

    var overrunConfig: OverrunConfig {
        OverrunConfig(ticks: quick ? 60 : 200)
    }

    /// A million live timers (--quick: 100,000); same-instant batches of
    /// 100,000 and of the live count.
    var scaleConfig: ScaleConfig {
        let timers = quick ? 100_000 : Scale.statedTimers
        return ScaleConfig(timers: timers, pairs: quick ? 200_000 : 1_000_000,
                           pairBudgetNs: quick ? 300_000_000 : 1_000_000_000,
                           batches: Array(Set([100_000, timers])).sorted(), preciseRounds: quick ? 2 : 4)
    }

    public func run() async throws {
        #if DEBUG
        progress("""
        warning: this is a DEBUG build; per-call costs (clock reads, schedule/cancel, handler overhead) \
        are inflated and the figures are not representative. Use `swift run -c release bench`.
        """)
        #endif
        let selected = self.selected
        let began = monoNow()
        let cyclictest = noCyclictest ? nil : Cyclictest.find()
        var environment = BenchEnvironment.current()
        environment.cyclictest = noCyclictest ? "left out (--no-cyclictest)"
            : cyclictest.map { "\($0) (\(Cyclictest.modeDescription))" }
            ?? "not installed: contender skipped (Debian/Ubuntu: apt-get install rt-tests)"
        var results = BenchResults(environment: environment, quick: quick)
        var noisyScenarios: [String] = []  // scenarios that ran while the machine was noisy

        let start = MachineLoad.Snapshot.now()
        var mark = start
        func load() -> MachineLoad {
            let now = MachineLoad.Snapshot.now()
            defer { mark = now }
            return MachineLoad.between(mark, now)
        }

        for scenario in selected {
            _ = load()
            switch scenario {
            case .periodic:
                let engines = try RepeatingTimerSchedulers(name: "bench-periodic")
                let asyncScheduler = try TimerScheduler(options: .init(name: "bench-async"))
                let nio = NIOTimers.group()
                var notes: [String] = []
                if cyclictest == nil {
                    notes.append("cyclictest, cyclictest.fifo: \(environment.cyclictest)")
                }
                results.periodic = try await NIOTimers.shuttingDown(nio) {
                    try await Periodic.run(
                        periodicConfig,
                        contenders: Periodic.contenders(engines: engines, asyncScheduler: asyncScheduler,
                                                        cyclictest: cyclictest, nio: nio),
                        notes: notes)
                }
                withExtendedLifetime((engines, asyncScheduler)) {}
            case .periodicLoad:
                let engines = try RepeatingTimerSchedulers(name: "bench-load")
                let asyncScheduler = try TimerScheduler(options: .init(name: "bench-load-async"))
                let nio = NIOTimers.group()
                var contenders = Periodic.contenders(engines: engines, asyncScheduler: asyncScheduler,
                                                     cyclictest: cyclictest, nio: nio)
                var notes: [String] = []
                if cyclictest == nil {
                    notes.append("cyclictest, cyclictest.fifo: \(environment.cyclictest)")
                }
                let rtEngine = try TimerScheduler(options: .init(priority: .realtime(80), name: "bench-rt80"))
                switch rtEngine.threadReport.realtime {
                case .granted(let priority):
                    contenders.append(PeriodicContender(name: "RepeatingTimer.realtime", cpuScope: .process) {
                        try await Periodic.repeatingTimer(rtEngine, $0, $1, $2)
                    })
                    notes.append("RepeatingTimer.realtime: its scheduler thread runs SCHED_FIFO \(priority)")
                case .refused(let errno):
                    notes.append("RepeatingTimer.realtime left out: realtime priority refused (\(errno))")
                case .notRequested:
                    notes.append("RepeatingTimer.realtime left out: realtime priority not requested")
                }
                results.periodicLoad = try await NIOTimers.shuttingDown(nio) {
                    try await Periodic.run(loadConfig, contenders: contenders, notes: notes)
                }
                withExtendedLifetime((engines, asyncScheduler, rtEngine)) {}
            case .framelink:
                let engine = try TimerScheduler(options: .init(name: "bench-frames"))
                results.framelink = try await Periodic.run(
                    framelinkConfig, contenders: FrameLinkScenario.contenders(engine: engine),
                    notes: ["FrameLink frame k is due at start + k / fps s exactly, rounded once to the nanosecond; DispatchSourceTimer runs every 1 s / fps rounded to whole nanoseconds (60 fps: 16,666,667 ns); ticks = frames per round",
                            "missed = frames dropped (FrameLink: Frame.dropped; Dispatch: data − 1)"])
                withExtendedLifetime(engine) {}
            case .drift:
                results.drift = try await Drift.run(driftConfig)
            case .overrun:
                results.overrun = try await Overrun.run(overrunConfig)
            case .clockRead:
                results.clockRead = try await ClockRead.run(
                    ClockReadConfig(reads: quick ? 2_000_000 : 10_000_000, trials: 3))
            case .coalescing:
                results.coalescing = try await Coalescing.run(
                    CoalescingConfig(durationNs: quick ? 600_000_000 : 3_000_000_000))
            case .scale:
                results.scale = try await Scale.run(scaleConfig)
            }
            let machine = load()
            if machine.isNoisy { noisyScenarios.append("\(scenario.rawValue) (\(machine.summary))") }
            switch scenario {
            case .periodic: results.periodic?.machineLoad = machine
            case .periodicLoad: results.periodicLoad?.machineLoad = machine
            case .framelink: results.framelink?.machineLoad = machine
            case .drift: results.drift?.machineLoad = machine
            case .overrun: results.overrun?.machineLoad = machine
            case .clockRead: results.clockRead?.machineLoad = machine
            case .coalescing: results.coalescing?.machineLoad = machine
            case .scale: results.scale?.machineLoad = machine
            }
        }
        let totalLoad = MachineLoad.between(start, MachineLoad.Snapshot.now())
        results.totalLoad = totalLoad
        results.seconds = Double(monoNow() - began) / 1e9

        let checks = Targets.evaluate(results)
        TableReport.print(results)
        TableReport.targets(checks)
        fflush(nil)  // all output streams: stdout before the progress lines below
        if let jsonPath {
            try BenchDocument(results, targets: checks).write(to: jsonPath)
            progress("wrote \(jsonPath)")
        }
        if let markdownPath {
            try MarkdownReport.render(results, targets: checks).write(toFile: markdownPath, atomically: true,
                                                                       encoding: .utf8)
            progress("wrote \(markdownPath)")
        }
        if let svgPath {
            try SVGReport.render(results).write(toFile: svgPath, atomically: true, encoding: .utf8)
            progress("wrote \(svgPath)")
        }
        if let csvDirectory {
            let files = try CSVReport.write(results, to: csvDirectory)
            progress("wrote \(files.count) CSV files to \(csvDirectory)")
        }
        progress("total \(Fmt.fixed(Double(monoNow() - began) / 1e9, 1)) s")
        // Last, after the progress lines: the verdict, then the exit status.
        Swift.print(Verdict.line(checks, RunConditions(load: totalLoad, debugBuild: environment.build == "debug",
                                                       quick: quick, noisyScenarios: noisyScenarios)))
        let status = Verdict.exitStatus(checks, check: check)
        if status != 0 { throw ExitCode(status) }
    }
}
