import Foundation
import Testing
@testable import BenchSupport

@Suite struct FrameLinkReportTests {
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

    @Test func jsonHasTheFramelinkScenarioWithItsFourContenders() throws {
        let r = results()
        let data = try BenchDocument(r, targets: Targets.evaluate(r)).encoded()
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try #require(root["scenarios"] as? [[String: Any]])
        let framelink = try #require(scenarios.first { $0["name"] as? String == "framelink" })
        let contenders = try #require(framelink["contenders"] as? [[String: Any]])
        #expect(contenders.compactMap { $0["name"] as? String }
            == ["FrameLink.60", "DispatchSourceTimer.60", "FrameLink.240", "DispatchSourceTimer.240"])
        for c in contenders {
            let lateness = try #require(c["lateness_ns"] as? [String: Any])
            for key in ["min", "p50", "p90", "p99", "p999", "max", "mean"] {
                #expect(lateness[key] != nil, "lateness_ns.\(key)")
            }
            #expect(c["dropped"] as? Int != nil)
        }
        #expect(contenders[3]["dropped"] as? Int == 3)
        // Other scenarios carry no `dropped`.
        let periodic = try #require(scenarios.first { $0["name"] as? String == "periodic-1khz" })
        #expect((periodic["contenders"] as? [[String: Any]])?.first?["dropped"] == nil)
    }

    @Test func markdownAndSVGShowTheFramelinkContenders() {
        let r = results()
        let markdown = MarkdownReport.render(r, targets: Targets.evaluate(r))
        let svg = SVGReport.render(r)
        for name in ["FrameLink.60", "DispatchSourceTimer.60", "FrameLink.240", "DispatchSourceTimer.240"] {
            #expect(markdown.contains(name), "markdown: \(name)")
            #expect(svg.contains(name), "svg: \(name)")
        }
        #expect(markdown.contains("framelink"))
    }
}
