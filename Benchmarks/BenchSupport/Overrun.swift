//===----------------------------------------------------------------------===//
// Scenario `overrun`: a 100 Hz timer whose handler, every 20th call, takes 2.5
// intervals (it sleeps 25 ms). Shows what each contender does with the ticks
// that fall due meanwhile: our MissedTickPolicy `.skip`, `.burst` and `.delay`
// beside DispatchSourceTimer (strict, zero leeway, private serial queue) and
// Foundation's Timer (tolerance 0, dedicated run-loop thread).
//
// Per contender: handler calls, ticks it reported missed (ours: Tick.missed;
// Dispatch: `data` − 1; Foundation.Timer reports nothing, so they are inferred
// from the grid: the ticks between two fires' grid slots), the ticks due over the
// run, whether the grid was kept (the median schedule error over the second half
// of the fires is under a tenth of the interval: fires still land on start +
// k × interval), and the final schedule error (last fire − its grid slot).
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer

struct OverrunConfig: Sendable {
    var intervalNs: Int64 = 10_000_000
    /// Grid ticks each contender runs for.
    var ticks: Int
    /// Every `every`-th handler call overruns.
    var every = 20
    /// How long an overrunning call takes (2.5 intervals).
    var overrunNs: Int64 = 25_000_000
}

struct OverrunFigures: Sendable {
    var name: String
    var fires = 0
    var overruns = 0
    var reportedMissed = 0
    /// True when `reportedMissed` is inferred from the grid (Foundation.Timer).
    var missedInferred = false
    var ticksDue = 0
    var gridKept = false
    /// The policy gives up the grid on purpose (`.delay`).
    var gridLossByDesign = false
    var medianScheduleErrorNs: Int64 = 0
    var finalScheduleErrorNs: Int64 = 0
    var maxScheduleErrorNs: Int64 = 0
    var error: String?

    var gridText: String {
        if gridKept { return "kept" }
        return gridLossByDesign ? "lost (by design)" : "lost"
    }
}

struct OverrunResult: Sendable {
    var config: OverrunConfig
    var contenders: [OverrunFigures]
}

/// One contender's record of its handler calls. Written only by the thread
/// running the handler; read after the timer stopped.
final class OverrunTally: @unchecked Sendable {
    let config: OverrunConfig
    let start: Int64
    let stopAt: Int64
    let wakes: SampleBuffer
    let indexes: SampleBuffer
    let done = Latch()
    var calls = 0
    var overruns = 0
    var missed = 0
    var finished = false

    init(config: OverrunConfig, start: Int64) {
        self.config = config
        self.start = start
        stopAt = start + Int64(config.ticks) * config.intervalNs - config.intervalNs / 2
        wakes = SampleBuffer(capacity: config.ticks * 2 + 16)
        indexes = SampleBuffer(capacity: config.ticks * 2 + 16)
    }

    /// Records a call for grid tick `index` reporting `missed` ticks; overruns
    /// on every `every`-th call. Returns false once the run is over.
    @discardableResult
    func fired(index: Int64, missed m: Int64) -> Bool {
        let now = monoNow()
        guard !finished else { return false }
        wakes.append(now)
        indexes.append(index)
        missed += Int(m)
        calls += 1
        if now >= stopAt {
            finished = true
            done.signal()
            return false
        }
        if calls % config.every == 0 {
            overruns += 1
            _ = cmc_sleep_until(cmc_clock_monotonic, monoNow() + config.overrunNs)
        }
        return true
    }

    /// The grid tick a fire at `now` stands for when the timer does not say:
    /// the latest one due.
    func inferredIndex(_ now: Int64) -> Int64 {
        now < start ? 0 : (now - start) / config.intervalNs
    }

    func figures(_ name: String, inferred: Bool = false, byDesign: Bool = false) -> OverrunFigures {
        var f = OverrunFigures(name: name, fires: calls, overruns: overruns, reportedMissed: missed,
                               missedInferred: inferred, gridLossByDesign: byDesign)
        let w = wakes.samples
        let idx = indexes.samples
        guard let last = w.last else { return f }
        f.ticksDue = Int((last - start) / config.intervalNs) + 1
        var errors: [Int64] = []
        errors.reserveCapacity(w.count)
        for i in 0..<w.count {
            errors.append(w[i] - (start + idx[i] * config.intervalNs))
        }
        f.finalScheduleErrorNs = errors.last ?? 0
        f.maxScheduleErrorNs = errors.map { abs($0) }.max() ?? 0
        let secondHalf = errors[(errors.count / 2)...].map { abs($0) }.sorted()
        f.medianScheduleErrorNs = secondHalf.isEmpty ? 0 : secondHalf[secondHalf.count / 2]
        f.gridKept = f.medianScheduleErrorNs < config.intervalNs / 10
        return f
    }
}

enum Overrun {
    static let name = "overrun"

    static func run(_ config: OverrunConfig) async throws -> OverrunResult {
        let engine = try TimerScheduler(options: .init(name: "bench-overrun"))
        let runs: [(String, @Sendable (OverrunConfig) async throws -> OverrunFigures)] = [
            ("RepeatingTimer.skip", { try await ours(engine, .skip, "RepeatingTimer.skip", $0) }),
            ("RepeatingTimer.burst", { try await ours(engine, .burst, "RepeatingTimer.burst", $0) }),
            ("RepeatingTimer.delay", { try await ours(engine, .delay, "RepeatingTimer.delay", $0) }),
            (Periodic.dispatchSourceName, dispatch),
            (Periodic.foundationTimerName, foundation),
        ]
        var figures: [OverrunFigures] = []
        let seconds = Double(config.ticks) * Double(config.intervalNs) / 1e9
        for (i, (label, body)) in runs.enumerated() {
            Watchdog.shared.arm("\(name) \(label)", seconds: seconds * 3 + 10)
            do {
                figures.append(try await body(config))
            } catch {
                figures.append(OverrunFigures(name: label, error: "\(error)"))
            }
            Watchdog.shared.disarm()
            progress("[\(name)] \(i + 1)/\(runs.count) \(label) done")
        }
        withExtendedLifetime(engine) {}
        return OverrunResult(config: config, contenders: figures)
    }

    static func ours(_ engine: TimerScheduler, _ policy: MissedTickPolicy, _ name: String,
                     _ config: OverrunConfig) async throws -> OverrunFigures {
        let start = monoNow() + config.intervalNs
        let tally = OverrunTally(config: config, start: start)
        let timer = try engine.repeating(every: .nanoseconds(config.intervalNs), startingAt: .init(nanoseconds: start),
                                         leeway: .zero, policy: policy, delivery: .inline) { tick in
            tally.fired(index: tick.index, missed: tick.missed)
        }
        await tally.done.wait()
        timer.cancel()
        return tally.figures(name, byDesign: policy == .delay)
    }

    @Sendable
    static func dispatch(_ config: OverrunConfig) async throws -> OverrunFigures {
        let queue = DispatchQueue(label: "bench.overrun")
        let start = monoNow() + config.intervalNs
        let tally = OverrunTally(config: config, start: start)
        let source = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        final class Served: @unchecked Sendable {
            var count: Int64 = 0
            var source: DispatchSourceTimer?
        }
        let served = Served()
        served.source = source
        source.setEventHandler {
            guard let source = served.source else { return }
            let n = Swift.max(1, Int64(source.data))
            served.count += n
            // This call stands for the latest of the n ticks it counts.
            tally.fired(index: served.count - 1, missed: n - 1)
        }
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: UInt64(start)),
                        repeating: .nanoseconds(Int(config.intervalNs)), leeway: .nanoseconds(0))
        source.activate()
        await tally.done.wait()
        source.cancel()
        queue.sync { served.source = nil }
        source.setEventHandler(handler: nil)
        return tally.figures(Periodic.dispatchSourceName)
    }

    @Sendable
    static func foundation(_ config: OverrunConfig) async throws -> OverrunFigures {
        try await onDedicatedThread(name: "bench-runloop") {
            let start = monoNow() + config.intervalNs
            let tally = OverrunTally(config: config, start: start)
            final class Prev: @unchecked Sendable { var index: Int64 = -1 }
            let prev = Prev()
            let fireDate = Date(timeIntervalSinceNow: Double(start - monoNow()) / 1e9)
            let timer = Timer(fire: fireDate, interval: Double(config.intervalNs) / 1e9, repeats: true) { t in
                let index = tally.inferredIndex(monoNow())
                let missed = Swift.max(0, index - prev.index - 1)
                prev.index = Swift.max(index, prev.index + 1)
                if !tally.fired(index: prev.index, missed: missed) { t.invalidate() }
            }
            timer.tolerance = 0
            RunLoop.current.add(timer, forMode: .default)
            while !tally.finished {
                _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
            }
            timer.invalidate()
            return tally.figures(Periodic.foundationTimerName, inferred: true)
        }
    }
}
