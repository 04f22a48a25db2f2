import Foundation
import Testing
@testable import BenchSupport

@Suite struct CyclictestTests {
    /// A real `cyclictest -q -m --laptop -t1 -i 1000 -l 400 -h 300` run, captured on the test machine.
    static var fixture: String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cyclictest-h300.txt")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    @Test func parsesTheCapturedHistogram() throws {
        let h = try Cyclictest.parse(Self.fixture)
        #expect(h.total == 399)
        #expect(h.minUs == 70)
        #expect(h.avgUs == 139)
        #expect(h.maxUs == 607)
        #expect(h.overflows == 1)
        #expect(h.buckets.reduce(0) { $0 + $1.count } == 399)
        #expect(h.sampleCount == 400)  // -l 400
        #expect(h.buckets.first?.us == 70)
        #expect(h.buckets.allSatisfy { $0.count > 0 && $0.us < 300 })
        #expect(zip(h.buckets, h.buckets.dropFirst()).allSatisfy { $0.us < $1.us })
    }

    @Test func expandsToSamplesAtBucketMiddles() throws {
        let h = try Cyclictest.parse(Self.fixture)
        let buffer = SampleBuffer(capacity: 1_000)
        h.expand(into: buffer)
        let samples = Array(buffer.samples)
        #expect(samples.count == 400)
        #expect(samples.first == 70_500)
        #expect(samples.last == 607_000)  // the overflow, at the reported maximum
    }

    @Test func parsesSeveralThreadColumnsAndRejectsOtherOutput() throws {
        let text = """
        # Histogram
        000000 000000\t000000
        000001 000005\t000002
        000002 000001\t000007
        # Total: 000000006 000000009
        # Min Latencies: 00001 00001
        # Avg Latencies: 00001 00001
        # Max Latencies: 00002 00002
        # Histogram Overflows: 00000 00000
        """
        let h = try Cyclictest.parse(text)
        #expect(h.buckets.map(\.us) == [1, 2])
        #expect(h.buckets.map(\.count) == [5, 1])
        #expect(h.total == 6)
        #expect(throws: CyclictestError.self) { try Cyclictest.parse("T: 0 ( 1234) P: 0 I:1000 C: 100") }
    }

    @Test func argumentsUseTheSameIntervalAndLaptopMode() {
        let args = Cyclictest.arguments(intervalNs: 1_000_000, loops: 500)
        #expect(args.contains("--laptop"))
        #expect(args.firstIndex(of: "-i").map { args[$0 + 1] } == "1000")
        #expect(args.firstIndex(of: "-l").map { args[$0 + 1] } == "500")
        #expect(!args.contains("-p"))  // SCHED_OTHER, like the other contenders
    }
}
