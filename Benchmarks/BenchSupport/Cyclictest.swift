//===----------------------------------------------------------------------===//
// cyclictest (rt-tests), the kernel community's own latency reference, as a
// contender of periodic-1khz: run as a subprocess with the same interval and
// number of ticks, its `-h` histogram parsed.
//
// How it is run: `cyclictest -q -m --laptop -t1 -i <interval µs> -l <ticks>
// -h <max µs>`: one measurement thread at SCHED_OTHER (no -p: the same normal
// priority as our contenders), clock_nanosleep on CLOCK_MONOTONIC with absolute
// deadlines, memory locked. `--laptop` keeps it from writing 0 to
// /dev/cpu_dma_latency while it runs (its default), which would hold every CPU
// out of deep idle states and flatter it against contenders that do not. Its
// histogram has 1 µs buckets (a sample of bucket b was b…b+1 µs late): we record
// each at the bucket's middle, b µs + 500 ns; overflows (later than the maximum
// tracked) at the run's reported maximum.
//
// `cyclictest.fifo` runs it the way its users do: the same, plus `-p 90`
// (SCHED_FIFO priority 90; `-m` locks memory in both), in the same rounds.
//===----------------------------------------------------------------------===//
import Foundation

/// cyclictest's `-h` output, parsed (the first thread's column).
struct CyclictestHistogram: Sendable, Equatable {
    /// (bucket in µs, count), buckets with a count of zero left out.
    var buckets: [(us: Int, count: Int)]
    var total: Int?
    var minUs: Int?
    var avgUs: Int?
    var maxUs: Int?
    var overflows: Int = 0

    static func == (a: CyclictestHistogram, b: CyclictestHistogram) -> Bool {
        a.buckets.map(\.us) == b.buckets.map(\.us) && a.buckets.map(\.count) == b.buckets.map(\.count)
            && a.total == b.total && a.minUs == b.minUs && a.avgUs == b.avgUs && a.maxUs == b.maxUs
            && a.overflows == b.overflows
    }

    /// Samples in the histogram (buckets plus overflows).
    var sampleCount: Int { buckets.reduce(0) { $0 + $1.count } + overflows }

    /// Appends one lateness sample (ns) per counted wake-up: b µs + 500 ns per
    /// bucket entry, the reported maximum per overflow. Sorted, not in time order.
    func expand(into samples: SampleBuffer) {
        for (us, count) in buckets {
            for _ in 0..<count { samples.append(Int64(us) * 1_000 + 500) }
        }
        let overflowValue = Int64(maxUs ?? buckets.last?.us ?? 0) * 1_000
        for _ in 0..<overflows { samples.append(overflowValue) }
    }
}

enum CyclictestError: Error, CustomStringConvertible {
    case failed(status: Int32, output: String)
    case unparsable(String)

    var description: String {
        switch self {
        case .failed(let status, let output): "cyclictest exited with status \(status): \(output)"
        case .unparsable(let why): "cyclictest output not understood: \(why)"
        }
    }
}

enum Cyclictest {
    static let name = "cyclictest"
    static let fifoName = "cyclictest.fifo"
    /// The SCHED_FIFO priority of `cyclictest.fifo` (`-p`).
    static let fifoPriority = 90
    /// Largest lateness its histogram tracks, in µs (later ones are overflows).
    static let maxTrackedUs = 50_000

    /// The cyclictest executable on PATH, or nil.
    static func find() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/cyclictest"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Without `fifo` at SCHED_OTHER (no `-p`), with it at SCHED_FIFO `fifoPriority`.
    static func arguments(intervalNs: Int64, loops: Int, fifo: Bool = false) -> [String] {
        ["-q", "-m", "--laptop", "-t1", "-i", String(Swift.max(1, intervalNs / 1_000)), "-l", String(loops),
         "-h", String(maxTrackedUs)] + (fifo ? ["-p", String(fifoPriority)] : [])
    }

    /// How it is run, for the report.
    static let modeDescription = "cyclictest -q -m --laptop -t1 -i <µs> -l <ticks> -h \(maxTrackedUs): "
        + "SCHED_OTHER, absolute clock_nanosleep; --laptop: /dev/cpu_dma_latency left alone "
        + "(cyclictest's default writes 0 there while it runs); 1 µs buckets recorded at their middle; "
        + "\(fifoName): the same with -p \(fifoPriority) (SCHED_FIFO)"

    /// Runs cyclictest and returns its stdout.
    static func run(path: String, intervalNs: Int64, loops: Int, fifo: Bool = false) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments(intervalNs: intervalNs, loops: loops, fifo: fifo)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot block it.
        let errData = Latch()
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let errThread = Thread {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            errData.signal()
        }
        errThread.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        _ = errData.waitBlocking(timeoutNs: 10_000_000_000)
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errBox.data, as: UTF8.self)
                .split(separator: "\n").filter { !$0.hasPrefix("WARN") }.prefix(2).joined(separator: " / ")
            throw CyclictestError.failed(status: process.terminationStatus, output: message)
        }
        return text
    }

    /// Parses the `-h` histogram: lines `BBBBBB CCCCCC [CCCCCC…]` (bucket in µs,
    /// then one count per thread; the first is used) and the `# Total:`, `# Min
    /// Latencies:`, `# Avg Latencies:`, `# Max Latencies:` and `# Histogram
    /// Overflows:` summary lines.
    static func parse(_ text: String) throws -> CyclictestHistogram {
        var h = CyclictestHistogram(buckets: [])
        var sawHistogram = false
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.dropFirst().split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else {
                    if line.hasPrefix("# Histogram") { sawHistogram = true }
                    continue
                }
                let key = parts[0].trimmingCharacters(in: .whitespaces)
                let first = parts[1].split(separator: " ").first.flatMap { Int($0) }
                switch key {
                case "Total": h.total = first
                case "Min Latencies": h.minUs = first
                case "Avg Latencies": h.avgUs = first
                case "Max Latencies": h.maxUs = first
                case "Histogram Overflows": h.overflows = first ?? 0
                default: break
                }
                continue
            }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let bucket = Int(fields[0]), let count = Int(fields[1]) else { continue }
            sawHistogram = true
            if count > 0 { h.buckets.append((bucket, count)) }
        }
        guard sawHistogram else {
            throw CyclictestError.unparsable("no histogram lines (was it run with -h?)")
        }
        return h
    }

    /// The periodic-1khz contenders: one cyclictest run per round, at
    /// SCHED_OTHER (`cyclictest`) and at SCHED_FIFO 90 (`cyclictest.fifo`).
    static func contenders(path: String) -> [PeriodicContender] {
        [contender(path: path, fifo: false), contender(path: path, fifo: true)]
    }

    static func contender(path: String, fifo: Bool) -> PeriodicContender {
        let note = fifo
            ? "\(fifoName): the same at SCHED_FIFO \(fifoPriority) (-m -p \(fifoPriority)), the way cyclictest's "
                + "users run it, but for --laptop (both rows): /dev/cpu_dma_latency is left alone, as for the "
                + "other contenders"
            : "\(name): a subprocess per round; its 1 µs histogram buckets are recorded at their middle; early "
                + "wakes and missed ticks are not reported by it (n/a: it skips overdue ticks silently); its "
                + "CPU/tick includes each round's process start-up and mlockall"
        return PeriodicContender(name: fifo ? fifoName : name, cpuScope: .child, note: note) { ticks, interval, samples in
            try await onDedicatedThread(name: "bench-cyclic") {
                let cpu0 = childrenCPUNs()
                let output = try run(path: path, intervalNs: interval, loops: ticks, fifo: fifo)
                let histogram = try parse(output)
                guard histogram.sampleCount > 0 else {
                    throw CyclictestError.unparsable("the histogram is empty")
                }
                histogram.expand(into: samples)
                return RoundOutcome(cpuNs: childrenCPUNs() - cpu0)
            }
        }
    }
}
