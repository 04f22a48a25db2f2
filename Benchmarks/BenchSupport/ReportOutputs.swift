//===----------------------------------------------------------------------===//
// Where a report goes: the terminal tables, and the JSON document (Encodable
// results with snake_case keys).
//===----------------------------------------------------------------------===//
import Foundation

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
        Swift.print("\n== targets (from the figures above) ==")
        Swift.print(ReportBuilder.targets(checks).text())
        Swift.print("  " + ReportBuilder.targetSummary(checks))
    }
}

// MARK: - JSON

/// The JSON document (schema `precision-timer-bench/1`): the result types
/// encode themselves (each next to its type); keys are their property names
/// in snake case (`JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`).
struct BenchDocument: Encodable {
    var schema = "precision-timer-bench/1"
    var results: BenchResults
    var targets: [TargetCheck]

    init(_ results: BenchResults, targets: [TargetCheck]) {
        self.results = results
        self.targets = targets
    }

    enum CodingKeys: CodingKey {
        case schema, environment, scenarios, targets
    }

    /// `environment`: the machine and build, and the facts of the run, in one object.
    struct RunEnvironment: Encodable {
        struct Facts: Encodable {
            var rounds: Int?
            var ticksPerRound: Int?
            var quick: Bool
            var machineLoad: MachineLoad?
            var warnings: [String]
            var runSeconds: Double
        }

        var machine: BenchEnvironment
        var facts: Facts

        func encode(to encoder: any Encoder) throws { try encodeFlat(machine, facts, to: encoder) }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        let r = results
        try c.encode(RunEnvironment(machine: r.environment, facts: .init(
            rounds: r.periodic?.config.rounds, ticksPerRound: r.periodic?.config.ticks, quick: r.quick,
            machineLoad: r.totalLoad, warnings: r.warnings, runSeconds: r.seconds.rounded(toPlaces: 1))),
                     forKey: .environment)
        var scenarios = c.nestedUnkeyedContainer(forKey: .scenarios)
        for p in r.latencyScenarios { try scenarios.encode(p) }
        if let o = r.overrun { try scenarios.encode(o) }
        if let s = r.clockRead { try scenarios.encode(s) }
        if let s = r.coalescing { try scenarios.encode(s) }
        if let s = r.scale { try scenarios.encode(s) }
        try c.encode(targets, forKey: .targets)
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A figure that is not a number is written as one of these strings,
        // never as 0, and never stops the report from being written.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf",
                                                                      nan: "nan")
        return try encoder.encode(self) + Data("\n".utf8)
    }

    func write(to path: String) throws {
        try encoded().write(to: URL(fileURLWithPath: path))
    }
}

extension Double {
    /// Rounded to `places` decimals (for the JSON; a non-finite value as it is).
    func rounded(toPlaces places: Int) -> Double {
        guard isFinite else { return self }  // written as "nan", "inf" or "-inf" (see `encoded()`)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

/// Encodes `config`'s keys and `rest`'s into one JSON object (a scenario's
/// settings beside its figures).
func encodeFlat(_ config: some Encodable, _ rest: some Encodable, to encoder: any Encoder) throws {
    try config.encode(to: encoder)
    try rest.encode(to: encoder)
}
