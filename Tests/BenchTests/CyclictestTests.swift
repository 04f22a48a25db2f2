import Foundation
import XCTest
@testable import BenchSupport

final class CyclictestTests: XCTestCase {
    /// A real `cyclictest -q -m --laptop -t1 -i 1000 -l 400 -h 300` run, captured on the test machine.
    static var fixture: String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cyclictest-h300.txt")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    func testParsesTheCapturedHistogram() throws {
        let h = try Cyclictest.parse(Self.fixture)
        XCTAssertEqual(h.total, 399)
        XCTAssertEqual(h.minUs, 70)
        XCTAssertEqual(h.avgUs, 139)
        XCTAssertEqual(h.maxUs, 607)
        XCTAssertEqual(h.overflows, 1)
        XCTAssertEqual(h.buckets.reduce(0) { $0 + $1.count }, 399)
        XCTAssertEqual(h.sampleCount, 400)  // -l 400
        XCTAssertEqual(h.buckets.first?.us, 70)
        XCTAssertTrue(h.buckets.allSatisfy { $0.count > 0 && $0.us < 300 })
        XCTAssertTrue(zip(h.buckets, h.buckets.dropFirst()).allSatisfy { $0.us < $1.us })
    }

    func testExpandsToSamplesAtBucketMiddles() throws {
        let h = try Cyclictest.parse(Self.fixture)
        let buffer = SampleBuffer(capacity: 1_000)
        h.expand(into: buffer)
        let samples = Array(buffer.samples)
        XCTAssertEqual(samples.count, 400)
        XCTAssertEqual(samples.first, 70_500)
        XCTAssertEqual(samples.last, 607_000)  // the overflow, at the reported maximum
    }

    func testParsesSeveralThreadColumnsAndRejectsOtherOutput() throws {
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
        XCTAssertEqual(h.buckets.map(\.us), [1, 2])
        XCTAssertEqual(h.buckets.map(\.count), [5, 1])
        XCTAssertEqual(h.total, 6)
        XCTAssertThrowsError(try Cyclictest.parse("T: 0 ( 1234) P: 0 I:1000 C: 100")) { XCTAssertTrue($0 is CyclictestError) }
    }

    func testArgumentsUseTheSameIntervalAndLaptopMode() {
        let args = Cyclictest.arguments(intervalNs: 1_000_000, loops: 500)
        XCTAssertTrue(args.contains("--laptop"))
        XCTAssertEqual(args.firstIndex(of: "-i").map { args[$0 + 1] }, "1000")
        XCTAssertEqual(args.firstIndex(of: "-l").map { args[$0 + 1] }, "500")
        XCTAssertTrue(!args.contains("-p"))  // SCHED_OTHER, like the other contenders
    }

    func testTheFifoContenderRunsAtPriority90() {
        let args = Cyclictest.arguments(intervalNs: 1_000_000, loops: 500, fifo: true)
        XCTAssertTrue(args.contains("-m"))
        XCTAssertEqual(args.firstIndex(of: "-p").map { args[$0 + 1] }, "90")
        XCTAssertEqual(Cyclictest.contenders(path: "/usr/bin/cyclictest").map(\.name), ["cyclictest", "cyclictest.fifo"])
    }
}
