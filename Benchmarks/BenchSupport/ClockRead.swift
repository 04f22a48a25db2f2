//===----------------------------------------------------------------------===//
// Scenario `clock-read`: nanoseconds per clock read. Each trial times `reads`
// back-to-back reads, folding every reading into a sink that ends in a black
// hole; trials are interleaved across contenders and the minimum is kept.
//
// Beside the reads, timed the same way: `TimerStatistics.record`, what a
// scheduler that records statistics adds per fire, with its values made by an
// LCG, and the LCG alone (how much of the row is making the values).
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
    /// A clock read (false: a cost measured beside them, which neither the
    /// ratio to clock_gettime nor the fastest mark applies to).
    var readsClock = true
}

struct ClockReadResult: Sendable, Encodable {
    var config: ClockReadConfig
    var contenders: [ClockReadFigures]
    var machineLoad: MachineLoad?

    func nsPerOp(_ name: String) -> Double? {
        contenders.first { $0.name == name }?.nsPerOp
    }

    enum CodingKeys: CodingKey { case name, contenders, machineLoad }
    enum ContenderKeys: String, CodingKey {
        case name, nsPerOp, ratioToClockGettime, readsClock, trialsNs = "trialsNsPerOp"
    }

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
            try e.encode(f.readsClock, forKey: .readsClock)
            try e.encodeIfPresent(f.readsClock ? base.map { (f.nsPerOp / $0).rounded(toPlaces: 3) } : nil,
                                  forKey: .ratioToClockGettime)
            try e.encode(f.trialsNs.map { $0.rounded(toPlaces: 3) }, forKey: .trialsNs)
        }
    }
}

enum ClockRead {
    static let name = "clock-read"

    /// Reads one clock (or makes one call of the operation timed) `n` times;
    /// returns the folded results.
    typealias Loop = @Sendable (_ n: Int) -> UInt64

    static let recordName = "TimerStatistics.record"
    static let recordValuesName = "TimerStatistics.record values (LCG)"

    static let contenders: [(name: String, loop: Loop, readsClock: Bool)] = [
        ("PrecisionClock.now", precisionClockNow, true),
        ("clock_gettime", clockGettime, true),
        ("ContinuousClock.now", continuousClockNow, true),
        ("DispatchTime.now", dispatchTimeNow, true),
        ("Date", foundationDate, true),
        ("Stopwatch.lap", stopwatchLap, true),
        (recordName, statisticsRecord, false),
        (recordValuesName, recordValues, false),
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

    /// Lateness and handler times for `TimerStatistics.record`: one step of an
    /// LCG (Knuth's MMIX constants) per call, two 32-bit slices of it scaled
    /// into ``range`` (a multiply and a shift each, no division).
    struct RecordValues {
        /// 50 ns … 50 µs: the lateness and handler times a scheduler sees.
        static let range: ClosedRange<Int64> = 50...50_000
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15

        @inline(__always)
        mutating func next() -> (lateness: Int64, handler: Int64) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Self.scaled(state >> 32), Self.scaled((state >> 16) & 0xFFFF_FFFF))
        }

        /// `bits` (below 2^32) scaled onto ``range``.
        @inline(__always)
        static func scaled(_ bits: UInt64) -> Int64 {
            range.lowerBound + Int64(truncatingIfNeeded: (bits &* UInt64(range.count)) >> 32)
        }
    }

    /// A `TimerStatistics` as a scheduler starts it (its initializer is the
    /// library's own): a virtual-time scheduler's, which has no thread.
    static let emptyStatistics = TimerScheduler(clock: VirtualClock()).statistics

    /// What a scheduler that records statistics adds per fire under its lock:
    /// `record` with a lateness and a handler time, one call per `n`.
    @inline(never) @Sendable
    static func statisticsRecord(_ n: Int) -> UInt64 {
        var statistics = emptyStatistics
        var values = RecordValues()
        let sink = fold(n) {
            let v = values.next()
            statistics.record(fireOn: 0, latenessNanoseconds: v.lateness, missed: 0, handlerNanoseconds: v.handler)
            return UInt64(bitPattern: v.lateness &+ v.handler)
        }
        blackHole(statistics)  // what was recorded is observed: no record can be dropped
        return sink &+ UInt64(statistics.fires)
    }

    /// ``statisticsRecord(_:)`` without the record: the values alone.
    @inline(never) @Sendable
    static func recordValues(_ n: Int) -> UInt64 {
        var values = RecordValues()
        return fold(n) {
            let v = values.next()
            return UInt64(bitPattern: v.lateness &+ v.handler)
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
            ClockReadFigures(name: c.name, nsPerOp: trials[i].min() ?? 0, trialsNs: trials[i], readsClock: c.readsClock)
        }
        return ClockReadResult(config: config, contenders: figures)
    }
}
