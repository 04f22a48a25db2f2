import ArgumentParser
import XCTest
@testable import BenchSupport

final class ArgumentTests: XCTestCase {
    func testDefaultsRunEveryScenario() throws {
        let bench = try Bench.parse([])
        XCTAssertEqual(bench.selected, ScenarioName.allCases)
        XCTAssertTrue(!bench.quick)
        XCTAssertEqual(bench.periodicConfig.rounds, 8)
        XCTAssertEqual(bench.periodicConfig.ticks, 500)
        XCTAssertEqual(bench.driftConfig.ticks, 2_000)
        XCTAssertEqual(bench.loadConfig.hogs, 2)
        XCTAssertEqual(bench.scaleConfig.timers, 1_000_000)
        XCTAssertEqual(bench.scaleConfig.batches, [100_000, 1_000_000])
    }

    func testScenariosOptionsAndQuick() throws {
        let bench = try Bench.parse(["drift", "periodic-1khz", "--quick", "--json", "a.json", "--markdown", "r.md",
                                     "--csv", "out", "--svg", "p.svg", "--rounds", "2", "--drift-seconds", "1.5"])
        XCTAssertEqual(bench.selected, [.periodic, .drift])  // run order, not argument order
        XCTAssertTrue(bench.quick)
        XCTAssertEqual(bench.jsonPath, "a.json")
        XCTAssertEqual(bench.markdownPath, "r.md")
        XCTAssertEqual(bench.csvDirectory, "out")
        XCTAssertEqual(bench.svgPath, "p.svg")
        XCTAssertEqual(bench.periodicConfig.rounds, 2)
        XCTAssertEqual(bench.periodicConfig.ticks, 150)
        XCTAssertEqual(bench.driftConfig.ticks, 150)
        XCTAssertEqual(bench.overrunConfig.ticks, 60)
        XCTAssertEqual(bench.scaleConfig.timers, 100_000)
        XCTAssertEqual(bench.scaleConfig.batches, [100_000])
    }

    func testRejectsBadInput() {
        XCTAssertThrowsError(try Bench.parse(["no-such-scenario"]))
        XCTAssertThrowsError(try Bench.parse(["--rounds", "0"]))
        XCTAssertThrowsError(try Bench.parse(["--drift-seconds", "-1"]))
        XCTAssertThrowsError(try Bench.parse(["--ticks", "x"]))
    }
}
