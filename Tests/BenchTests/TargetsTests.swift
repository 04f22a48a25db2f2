import XCTest
@testable import BenchSupport

/// How a target treats a figure that is missing.
final class TargetsTests: XCTestCase {
    func target(_ name: String, in checks: [TargetCheck], file: StaticString = #filePath,
                line: UInt = #line) throws -> TargetCheck {
        try XCTUnwrap(checks.first { $0.name == name }, "no target \(name)", file: file, line: line)
    }

    /// A contender of a scenario that ran, failed or with no samples, fails its
    /// targets instead of skipping them; a missing reference figure skips.
    func testAMissingFigureOfAScenarioThatRanFailsItsTarget() throws {
        var r = sampleResults()
        let checks = Targets.evaluate(r)
        // The sample run has no RepeatingTimer contender.
        let repeating = try target("RepeatingTimer p50 ≤ 2 µs", in: checks)
        XCTAssertEqual(repeating.pass, false)
        XCTAssertEqual(repeating.measured, "missing: its contender failed or recorded nothing")
        XCTAssertEqual(try target("RepeatingTimer statistics count the bench's fires", in: checks).pass, false)
        let adaptive = try target("PrecisionClock.wait(.adaptive) p50 ≤ 1 µs", in: checks)
        XCTAssertNotNil(adaptive.value)  // measured: judged on its figure (about 6 µs in the sample run)
        XCTAssertEqual(adaptive.pass, false)
        XCTAssertEqual(adaptive.measured, Fmt.duration(try XCTUnwrap(adaptive.value)))
        XCTAssertEqual(Verdict.exitStatus(checks, check: true), 1)

        // The adaptive wait measured, DispatchSourceTimer (its reference) failed: skipped.
        let contenders = r.periodic!.contenders.map { f -> PeriodicFigures in
            var f = f
            if f.name == Periodic.dispatchSourceName { f.error = "failed" }
            return f
        }
        r.periodic = PeriodicResult(config: r.periodic!.config, contenders: contenders, adaptiveMarginNs: 20_000)
        let againstDispatch = try target("PrecisionClock.wait(.adaptive) p99 ≤ 0.35× DispatchSourceTimer p99",
                                         in: Targets.evaluate(r))
        XCTAssertNil(againstDispatch.pass)
        XCTAssertEqual(againstDispatch.limitText, "not measured")

        // The adaptive wait failed: its targets fail, whatever their reference.
        r.periodic = PeriodicResult(config: r.periodic!.config, contenders: contenders.map { f in
            var f = f
            if f.name == Periodic.adaptiveName { f.error = "failed" }
            return f
        }, adaptiveMarginNs: 20_000)
        let after = Targets.evaluate(r)
        XCTAssertEqual(try target("PrecisionClock.wait(.adaptive) p50 ≤ 1 µs", in: after).pass, false)
        XCTAssertEqual(try target("PrecisionClock.wait(.adaptive) p99 ≤ 0.35× DispatchSourceTimer p99",
                                  in: after).pass, false)
    }

    /// Targets skipped for a stated reason stay skipped: a total over a million
    /// timers in a run with fewer.
    func testAFigureLeftOutForAStatedReasonStaysSkipped() throws {
        let checks = Targets.scale(sampleScale(timers: 100_000, batches: [100_000])).map(Targets.failingMissingFigures)
        let cancelAll = try target("scale: cancel all 1,000,000 live ≤ 100 ms", in: checks)
        XCTAssertNil(cancelAll.pass)
        XCTAssertEqual(cancelAll.measured, "not evaluated with 100,000 live")
    }
}
