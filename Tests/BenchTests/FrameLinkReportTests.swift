import Foundation
import XCTest
@testable import BenchSupport

final class FrameLinkReportTests: XCTestCase {
    func results() -> BenchResults {
        var r = sampleResults()
        let names = ["FrameLink.60", "DispatchSourceTimer.60", "FrameLink.240", "DispatchSourceTimer.240"]
        let contenders = names.enumerated().map { i, name -> PeriodicFigures in
            var acc = LatenessAccumulator()
            for k in 0..<100 { acc.add(Int64(1_000 * (i + 1) + k), missedAbove: .max) }
            acc.addSkipped(i)
            var f = PeriodicFigures(name: name, cpuScope: .process)
            f.ticks = 100
            f.samples = acc.samples
            f.missed = acc.missed
            f.lateness = acc.summary
            f.cdf = acc.cdf
            return f
        }
        r.framelink = PeriodicResult(
            config: PeriodicConfig(rounds: 2, ticks: 100, warmupTicks: 10, intervalNs: FrameLinkScenario.period(fps: 60),
                                   scenario: FrameLinkScenario.name),
            contenders: contenders, adaptiveMarginNs: 0)
        return r
    }

    func testJsonHasTheFramelinkScenarioWithItsFourContenders() throws {
        let r = results()
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try XCTUnwrap(root["scenarios"] as? [[String: Any]])
        let framelink = try XCTUnwrap(scenarios.first { $0["name"] as? String == "framelink" })
        let contenders = try XCTUnwrap(framelink["contenders"] as? [[String: Any]])
        XCTAssertTrue(contenders.compactMap { $0["name"] as? String }
            == ["FrameLink.60", "DispatchSourceTimer.60", "FrameLink.240", "DispatchSourceTimer.240"])
        for c in contenders {
            let lateness = try XCTUnwrap(c["lateness_ns"] as? [String: Any])
            for key in ["min", "p50", "p90", "p99", "p999", "max", "mean"] {
                XCTAssertTrue(lateness[key] != nil, "lateness_ns.\(key)")
            }
            XCTAssertTrue(c["dropped"] as? Int != nil)
        }
        XCTAssertEqual(contenders[3]["dropped"] as? Int, 3)
        // Other scenarios carry no `dropped`.
        let periodic = try XCTUnwrap(scenarios.first { $0["name"] as? String == "periodic-1khz" })
        XCTAssertNil((periodic["contenders"] as? [[String: Any]])?.first?["dropped"])
    }

    func testMarkdownAndSVGShowTheFramelinkContenders() {
        let r = results()
        let markdown = MarkdownReport.render(r, targets: Targets.evaluate(r))
        let svg = SVGReport.render(r)
        for name in ["FrameLink.60", "DispatchSourceTimer.60", "FrameLink.240", "DispatchSourceTimer.240"] {
            XCTAssertTrue(markdown.contains(name), "markdown: \(name)")
            XCTAssertTrue(svg.contains(name), "svg: \(name)")
        }
        XCTAssertTrue(markdown.contains("framelink"))
    }
}
