//===----------------------------------------------------------------------===//
// The `bench` command: `swift run -c release bench [scenario…] [--quick]
// [--json FILE] [--rounds N] [--ticks N]`.
//===----------------------------------------------------------------------===//
import ArgumentParser
import Foundation

enum ScenarioName: String, CaseIterable, ExpressibleByArgument, Sendable {
    case periodic = "periodic-1khz"
    case clockRead = "clock-read"
    case coalescing
    case scale
}

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measures PrecisionTimer against Dispatch, Task.sleep and the raw syscalls.",
        discussion: """
        Scenarios: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", ")) (default: all). \
        Contenders are interleaved in rounds so machine noise hits each alike. \
        Build with -c release: a debug build inflates per-call costs.
        """)

    @Argument(help: "Scenarios to run (default: all).")
    var scenarios: [ScenarioName] = []

    @Flag(help: "A sub-30-second smoke run: fewer rounds and ticks, shorter coalescing runs, 20k timers for scale.")
    var quick = false

    @Option(name: .customLong("json"), help: ArgumentHelp("Also write the results as JSON to this file.",
                                                          valueName: "file"))
    var jsonPath: String?

    @Option(help: "Interleaved rounds of periodic-1khz (default 10, --quick 4).")
    var rounds: Int?

    @Option(help: "Ticks per contender per round of periodic-1khz (default 500, --quick 200).")
    var ticks: Int?

    @Option(help: "Warm-up ticks per contender before the rounds (default 100, --quick 50).")
    var warmup: Int?

    mutating func validate() throws {
        if let rounds, rounds < 1 { throw ValidationError("--rounds must be at least 1") }
        if let ticks, ticks < 1 { throw ValidationError("--ticks must be at least 1") }
        if let warmup, warmup < 0 { throw ValidationError("--warmup must not be negative") }
    }

    func run() async throws {
        #if DEBUG
        progress("""
        warning: this is a DEBUG build; per-call costs (clock reads, schedule/cancel, handler overhead) \
        are inflated and the figures are not representative. Use `swift run -c release bench`.
        """)
        #endif
        let selected = Set(scenarios.isEmpty ? ScenarioName.allCases : scenarios)
        let began = monoNow()
        let environment = BenchEnvironment.current()
        var results = BenchResults(environment: environment, quick: quick)

        let start = MachineLoad.Snapshot.now()
        var mark = start
        func load() -> MachineLoad {
            let now = MachineLoad.Snapshot.now()
            defer { mark = now }
            return MachineLoad.between(mark, now)
        }

        if selected.contains(.periodic) {
            let config = PeriodicConfig(rounds: rounds ?? (quick ? 4 : 10), ticks: ticks ?? (quick ? 200 : 500),
                                        warmupTicks: warmup ?? (quick ? 50 : 100))
            results.periodic = try await Periodic.run(config)
            results.load[ScenarioName.periodic.rawValue] = load()
        }
        if selected.contains(.clockRead) {
            let config = ClockReadConfig(reads: quick ? 2_000_000 : 10_000_000, trials: 3)
            _ = load()
            results.clockRead = try await ClockRead.run(config)
            results.load[ScenarioName.clockRead.rawValue] = load()
        }
        if selected.contains(.coalescing) {
            let config = CoalescingConfig(durationNs: quick ? 1_000_000_000 : 3_000_000_000)
            _ = load()
            results.coalescing = try await Coalescing.run(config)
            results.load[ScenarioName.coalescing.rawValue] = load()
        }
        if selected.contains(.scale) {
            let config = ScaleConfig(timers: quick ? 20_000 : 100_000, pairs: quick ? 200_000 : 1_000_000,
                                     pairBudgetNs: quick ? 300_000_000 : 1_000_000_000)
            _ = load()
            results.scale = try await Scale.run(config)
            results.load[ScenarioName.scale.rawValue] = load()
        }
        results.totalLoad = MachineLoad.between(start, MachineLoad.Snapshot.now())

        let checks = Targets.evaluate(results)
        TableReport.print(results)
        TableReport.targets(checks)
        fflush(nil)  // all output streams: stdout before the progress lines below
        if let jsonPath {
            try BenchDocument(results, targets: checks).write(to: jsonPath)
            progress("wrote \(jsonPath)")
        }
        progress("total \(Fmt.fixed(Double(monoNow() - began) / 1e9, 1)) s")
    }
}
