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

struct OverrunConfig: Sendable, Encodable {
    var intervalNs: Int64 = 10_000_000
    /// Grid ticks each contender runs for.
    var ticks: Int
    /// Every `every`-th handler call overruns.
    var every = 20
    /// How long an overrunning call takes (2.5 intervals).
    var overrunNs: Int64 = 25_000_000

    enum CodingKeys: String, CodingKey {
        case intervalNs, ticks, every = "overrunEvery", overrunNs
    }
}

struct OverrunFigures: Sendable, Encodable {
    var name: String
    var fires = 0
    var overruns = 0
    var reportedMissed = 0
    /// True when `reportedMissed` is inferred from the grid (Foundation.Timer).
    var missedInferred = false
    var ticksDue = 0
    var grid = GridOutcome.lost
    var medianScheduleErrorNs: Int64 = 0
    var finalScheduleErrorNs: Int64 = 0
    var maxScheduleErrorNs: Int64 = 0
    var error: String?

    /// Whether the timer kept its grid through the overruns.
    enum GridOutcome: String, Sendable, Encodable {
        case kept
        case lost
        /// The policy gives up the grid on purpose (`.delay`).
        case lostByDesign = "lost (by design)"
    }

    enum CodingKeys: String, CodingKey {
        case name, fires, overruns, reportedMissed = "missed", missedInferred, ticksDue, grid
        case medianScheduleErrorNs, finalScheduleErrorNs, maxScheduleErrorNs, error
    }
}

struct OverrunResult: Sendable, Encodable {
    var config: OverrunConfig
    var contenders: [OverrunFigures]
    var machineLoad: MachineLoad?

    enum CodingKeys: CodingKey { case name, contenders, machineLoad }

    func encode(to encoder: any Encoder) throws {
        try config.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Overrun.name, forKey: .name)
        try c.encode(contenders, forKey: .contenders)
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
    }
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
    /// Which grid ticks each call served (a run bounded by `stopAt`, not by ticks).
    var grid: TickGrid
    var overruns = 0
    var finished = false

    init(config: OverrunConfig, start: Int64) {
        self.config = config
        self.start = start
        grid = TickGrid(start: start, interval: config.intervalNs)
        stopAt = start + Int64(config.ticks) * config.intervalNs - config.intervalNs / 2
        wakes = SampleBuffer(capacity: config.ticks * 2 + 16)
        indexes = SampleBuffer(capacity: config.ticks * 2 + 16)
    }

    /// Records a call that reports `missed` ticks before the one it serves
    /// (`index`, when the timer says); overruns on every `every`-th call.
    /// Returns false once the run is over.
    @discardableResult
    func fired(missed m: Int64, index: Int64? = nil) -> Bool {
        record(monoNow()) { grid, _ in grid.fire(missed: Int(m), last: index.map { Int($0) }) }
    }

    /// Records a call of a timer that does not say which tick it serves: the
    /// grid rule infers it (the latest tick due) and the ticks missed.
    @discardableResult
    func woke() -> Bool {
        record(monoNow()) { $0.wake(at: $1) }
    }

    private func record(_ now: Int64, _ serve: (inout TickGrid, Int64) -> Void) -> Bool {
        guard !finished else { return false }
        serve(&grid, now)
        wakes.append(now)
        indexes.append(Int64(grid.lastServed))
        if now >= stopAt {
            finished = true
            done.signal()
            return false
        }
        if grid.fires % config.every == 0 {
            overruns += 1
            _ = sleepUntilRetrying(monoNow() + config.overrunNs)
        }
        return true
    }

    func figures(_ name: String, inferred: Bool = false, byDesign: Bool = false) -> OverrunFigures {
        var f = OverrunFigures(name: name, fires: grid.fires, overruns: overruns, reportedMissed: grid.missed,
                               missedInferred: inferred, grid: byDesign ? .lostByDesign : .lost)
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
        if f.medianScheduleErrorNs < config.intervalNs / 10 { f.grid = .kept }
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
            tally.fired(missed: Int64(tick.missed), index: Int64(tick.index))
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
            var source: DispatchSourceTimer?
        }
        let served = Served()
        served.source = source
        source.setEventHandler {
            guard let source = served.source else { return }
            // This call stands for the latest of the n ticks it counts.
            tally.fired(missed: Swift.max(1, Int64(source.data)) - 1)
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
            let fireDate = Date(timeIntervalSinceNow: Double(start - monoNow()) / 1e9)
            let timer = Timer(fire: fireDate, interval: Double(config.intervalNs) / 1e9, repeats: true) { t in
                if !tally.woke() { t.invalidate() }
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
