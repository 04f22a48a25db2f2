import ArgumentParser
import Testing
@testable import BenchSupport

@Suite struct ArgumentTests {
    @Test func defaultsRunEveryScenario() throws {
        let bench = try Bench.parse([])
        #expect(bench.selected == ScenarioName.allCases)
        #expect(!bench.quick)
        #expect(bench.periodicConfig.rounds == 8)
        #expect(bench.periodicConfig.ticks == 500)
        #expect(bench.driftConfig.ticks == 2_000)
        #expect(bench.loadConfig.hogs == 2)
    }

    @Test func scenariosOptionsAndQuick() throws {
        let bench = try Bench.parse(["drift", "periodic-1khz", "--quick", "--json", "a.json", "--markdown", "r.md",
                                     "--csv", "out", "--svg", "p.svg", "--rounds", "2", "--drift-seconds", "1.5"])
        #expect(bench.selected == [.periodic, .drift])  // run order, not argument order
        #expect(bench.quick)
        #expect(bench.jsonPath == "a.json")
        #expect(bench.markdownPath == "r.md")
        #expect(bench.csvDirectory == "out")
        #expect(bench.svgPath == "p.svg")
        #expect(bench.periodicConfig.rounds == 2)
        #expect(bench.periodicConfig.ticks == 150)
        #expect(bench.driftConfig.ticks == 150)
        #expect(bench.overrunConfig.ticks == 60)
    }

    @Test func rejectsBadInput() {
        #expect(throws: (any Error).self) { try Bench.parse(["no-such-scenario"]) }
        #expect(throws: (any Error).self) { try Bench.parse(["--rounds", "0"]) }
        #expect(throws: (any Error).self) { try Bench.parse(["--drift-seconds", "-1"]) }
        #expect(throws: (any Error).self) { try Bench.parse(["--ticks", "x"]) }
    }
}
