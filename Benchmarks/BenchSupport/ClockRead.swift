//===----------------------------------------------------------------------===//
// Scenario `clock-read`: nanoseconds per clock read. Each trial times `reads`
// back-to-back reads, folding every reading into a sink that ends in a black
// hole; trials are interleaved across contenders and the minimum is kept.
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer

#if canImport(Glibc)
import Glibc
#endif

struct ClockReadConfig: Sendable, Encodable {
    var reads: Int
    var trials: Int
}

struct ClockReadFigures: Sendable {
    var name: String
    var nsPerOp: Double
    var trialsNs: [Double]
}

struct ClockReadResult: Sendable, Encodable {
    var config: ClockReadConfig
    var contenders: [ClockReadFigures]
    var machineLoad: MachineLoad?

    func nsPerOp(_ name: String) -> Double? {
        contenders.first { $0.name == name }?.nsPerOp
    }

    enum CodingKeys: CodingKey { case name, contenders, machineLoad }
    enum ContenderKeys: String, CodingKey { case name, nsPerOp, ratioToClockGettime, trialsNs = "trialsNsPerOp" }

    func encode(to encoder: any Encoder) throws {
        try config.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ClockRead.name, forKey: .name)
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
        let base = nsPerOp("clock_gettime")
        var list = c.nestedUnkeyedContainer(forKey: .contenders)
        for f in contenders {
            var e = list.nestedContainer(keyedBy: ContenderKeys.self)
            try e.encode(f.name, forKey: .name)
            try e.encode(f.nsPerOp.rounded(toPlaces: 3), forKey: .nsPerOp)
            try e.encodeIfPresent(base.map { (f.nsPerOp / $0).rounded(toPlaces: 3) }, forKey: .ratioToClockGettime)
            try e.encode(f.trialsNs.map { $0.rounded(toPlaces: 3) }, forKey: .trialsNs)
        }
    }
}

enum ClockRead {
    static let name = "clock-read"

    /// Reads one clock `n` times; returns the folded readings.
    typealias Loop = @Sendable (_ n: Int) -> UInt64

    static let contenders: [(name: String, loop: Loop)] = [
        ("PrecisionClock.now", precisionClockNow),
        ("clock_gettime", clockGettime),
        ("ContinuousClock.now", continuousClockNow),
        ("DispatchTime.now", dispatchTimeNow),
        ("Date", foundationDate),
        ("Stopwatch.lap", stopwatchLap),
    ]

    /// Folds `n` results of `read` into a sink. Always inlined into the
    /// `@inline(never)` contender that calls it, so `read` is inlined into the
    /// timed loop: no closure call is timed.
    @inline(__always)
    static func fold(_ n: Int, _ read: () -> UInt64) -> UInt64 {
        var acc: UInt64 = 0
        for _ in 0..<n { acc &+= read() }
        return acc
    }

    /// The overhead of one `Stopwatch.lap()`: a clock read plus the split.
    @inline(never) @Sendable
    static func stopwatchLap(_ n: Int) -> UInt64 {
        var watch = Stopwatch()
        return fold(n) { UInt64(bitPattern: watch.lap().components.attoseconds) }
    }

    @inline(never) @Sendable
    static func precisionClockNow(_ n: Int) -> UInt64 {
        let clock = PrecisionClock()
        return fold(n) { UInt64(bitPattern: clock.now.nanoseconds) }
    }

    @inline(never) @Sendable
    static func clockGettime(_ n: Int) -> UInt64 {
        var ts = timespec()
        return fold(n) {
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(bitPattern: Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec))
        }
    }

    @inline(never) @Sendable
    static func continuousClockNow(_ n: Int) -> UInt64 {
        let clock = ContinuousClock()
        return fold(n) {
            // The instant's raw bits: folding them costs nothing measurable.
            withUnsafeBytes(of: clock.now) { $0.loadUnaligned(as: UInt64.self) }
        }
    }

    @inline(never) @Sendable
    static func dispatchTimeNow(_ n: Int) -> UInt64 {
        fold(n) { DispatchTime.now().uptimeNanoseconds }
    }

    @inline(never) @Sendable
    static func foundationDate(_ n: Int) -> UInt64 {
        fold(n) { Date().timeIntervalSinceReferenceDate.bitPattern }
    }

    static func run(_ config: ClockReadConfig) async throws -> ClockReadResult {
        let contenders = self.contenders
        Watchdog.shared.arm(name, seconds: Double(config.reads) * Double(config.trials) * 5e-6 + 30)
        defer { Watchdog.shared.disarm() }
        let trials = try await onDedicatedThread(name: "bench-clockread") { () -> [[Double]] in
            var trials = [[Double]](repeating: [], count: contenders.count)
            // Warm-up: page in the code paths and the vDSO.
            for c in contenders { blackHole(c.loop(Swift.max(1, config.reads / 20))) }
            for trial in 1...config.trials {
                for (i, c) in contenders.enumerated() {
                    let t0 = monoNow()
                    let sink = c.loop(config.reads)
                    let t1 = monoNow()
                    blackHole(sink)
                    trials[i].append(Double(t1 - t0) / Double(config.reads))
                }
                progress("[\(name)] trial \(trial)/\(config.trials) done")
            }
            return trials
        }
        let figures = contenders.enumerated().map { i, c in
            ClockReadFigures(name: c.name, nsPerOp: trials[i].min() ?? 0, trialsNs: trials[i])
        }
        return ClockReadResult(config: config, contenders: figures)
    }
}
