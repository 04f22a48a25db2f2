import XCTest
@testable import BenchSupport

/// The verdict line and the exit status of `--check`, from synthetic checks.
final class VerdictTests: XCTestCase {
    /// Checks that meet, miss and skip, in that order, `met` + `missed` + `skipped` of them.
    func checks(met: Int, missed: Int, skipped: Int = 0) -> [TargetCheck] {
        func check(_ pass: Bool?) -> TargetCheck {
            TargetCheck(name: "t", scenario: "clock-read", value: pass == nil ? nil : 1, limit: 1, measured: "1",
                        limitText: "≤ 1", pass: pass)
        }
        return Array(repeating: check(true), count: met) + Array(repeating: check(false), count: missed)
            + Array(repeating: check(nil), count: skipped)
    }

    let quiet = MachineLoad(otherBusyPercent: 1.2, stealPercent: 0.3)
    let noisy = MachineLoad(otherBusyPercent: 9, stealPercent: 4.25)

    func verdict(_ checks: [TargetCheck], _ load: MachineLoad, debug: Bool = false, quick: Bool = false) -> String {
        Verdict.line(checks, RunConditions(load: load, debugBuild: debug, quick: quick))
    }

    func testNoisyIsTheReportWarningsRule() {
        XCTAssertFalse(MachineLoad(otherBusyPercent: 4, stealPercent: 1).isNoisy)  // 5 %: not above
        XCTAssertTrue(MachineLoad(otherBusyPercent: 4, stealPercent: 1.5).isNoisy)
        XCTAssertTrue(MachineLoad(otherBusyPercent: 0, stealPercent: 6).isNoisy)
        let environment = sampleResults().environment
        XCTAssertTrue(environment.warnings(load: noisy).contains { $0.hasPrefix("noisy run:") })
        XCTAssertFalse(environment.warnings(load: quiet).contains { $0.hasPrefix("noisy run:") })
    }

    func testAllMet() {
        XCTAssertEqual(verdict(checks(met: 27, missed: 0), quiet), "verdict: all 27 targets met")
        XCTAssertEqual(verdict(checks(met: 1, missed: 0), quiet), "verdict: the 1 target met")
        XCTAssertEqual(verdict(checks(met: 25, missed: 0, skipped: 2), quiet),
                       "verdict: all 25 targets met (2 not evaluated)")
        XCTAssertEqual(verdict(checks(met: 27, missed: 0), noisy),
                       "verdict: all 27 targets met, even on a noisy machine "
                       + "(other processes 9.0 % of the machine, steal 4.3 %)")
    }

    func testMissedOnAQuietMachineInAReleaseBuildIsARegression() {
        XCTAssertEqual(verdict(checks(met: 25, missed: 2), quiet),
                       "verdict: 2 of 27 targets missed on a quiet machine "
                       + "(other processes 1.2 % of the machine, steal 0.3 %) in a release build: "
                       + "a regression in the library")
        XCTAssertEqual(verdict(checks(met: 26, missed: 1), quiet, quick: true),
                       "verdict: 1 of 27 targets missed on a quiet machine "
                       + "(other processes 1.2 % of the machine, steal 0.3 %) in a release build, "
                       + "but a --quick run (few samples): "
                       + "rerun without --quick to confirm a regression in the library")
    }

    /// A quiet run in which one scenario ran on a noisy machine names it.
    func testMissedOnAQuietRunNamesTheScenariosThatRanNoisy() {
        let conditions = RunConditions(load: quiet, debugBuild: false, quick: false,
                                       noisyScenarios: ["drift (other processes 10.9 % of the machine, steal 0.0 %)"])
        XCTAssertEqual(Verdict.line(checks(met: 25, missed: 2), conditions),
                       "verdict: 2 of 27 targets missed on a quiet machine "
                       + "(other processes 1.2 % of the machine, steal 0.3 %) in a release build, but noisy during "
                       + "drift (other processes 10.9 % of the machine, steal 0.0 %): a regression in the library "
                       + "unless a miss is in those scenarios (rerun them to tell)")
        XCTAssertEqual(Verdict.line(checks(met: 27, missed: 0), conditions), "verdict: all 27 targets met")
    }

    func testMissedOnANoisyMachineSaysWhatMadeItNoisy() {
        XCTAssertEqual(verdict(checks(met: 22, missed: 5), noisy),
                       "verdict: 5 of 27 targets missed on a noisy machine "
                       + "(other processes 9.0 % of the machine, steal 4.3 %): "
                       + "rerun on a quiet machine before blaming the library")
        XCTAssertEqual(verdict(checks(met: 20, missed: 5, skipped: 2), noisy, quick: true),
                       "verdict: 5 of 25 targets missed (2 not evaluated) on a noisy machine "
                       + "(other processes 9.0 % of the machine, steal 4.3 %): "
                       + "rerun on a quiet machine before blaming the library")
    }

    func testMissedInADebugBuild() {
        XCTAssertEqual(verdict(checks(met: 0, missed: 1), quiet, debug: true),
                       "verdict: 1 of 1 target missed in a debug build (per-call costs inflated): "
                       + "rerun with -c release before blaming the library")
        XCTAssertEqual(verdict(checks(met: 20, missed: 7), noisy, debug: true, quick: true),
                       "verdict: 7 of 27 targets missed in a debug build on a noisy machine "
                       + "(other processes 9.0 % of the machine, steal 4.3 %): "
                       + "rerun with -c release on a quiet machine before blaming the library")
    }

    func testNothingToJudge() {
        XCTAssertEqual(verdict([], quiet), "verdict: no targets in the scenarios that ran")
        XCTAssertEqual(verdict(checks(met: 0, missed: 0, skipped: 3), noisy),
                       "verdict: none of the 3 targets evaluated (not measured)")
    }

    func testExitStatus() {
        // Without --check: 0 after a full report, whatever the targets.
        XCTAssertEqual(Verdict.exitStatus(checks(met: 22, missed: 5), check: false), 0)
        // With --check: 1 on any miss (the machine's noise does not enter); a skip is no miss.
        XCTAssertEqual(Verdict.exitStatus(checks(met: 22, missed: 5), check: true), 1)
        XCTAssertEqual(Verdict.exitStatus(checks(met: 0, missed: 1), check: true), 1)
        XCTAssertEqual(Verdict.exitStatus(checks(met: 27, missed: 0), check: true), 0)
        XCTAssertEqual(Verdict.exitStatus(checks(met: 25, missed: 0, skipped: 2), check: true), 0)
        XCTAssertEqual(Verdict.exitStatus([], check: true), 0)
    }

    func testCheckFlag() throws {
        XCTAssertFalse(try Bench.parse([]).check)
        XCTAssertTrue(try Bench.parse(["--quick", "--check", "clock-read"]).check)
    }
}
