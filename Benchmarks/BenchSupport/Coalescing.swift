//===----------------------------------------------------------------------===//
// Scenario `coalescing`: 500 repeating timers with periods spread evenly over
// 10–50 ms, run for a few seconds at several leeways, on the engine (one
// dedicated TimerScheduler per run) and on 500 DispatchSourceTimers sharing
// one private serial queue. Counts fires, early fires, fires later than the
// leeway, wake-ups per second and CPU.
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer

struct CoalescingConfig: Sendable {
    var timers = 500
    var minPeriodNs: Int64 = 10_000_000
    var maxPeriodNs: Int64 = 50_000_000
    var durationNs: Int64
    var leewaysNs: [Int64] = [0, 1_000_000, 5_000_000]

    /// Period of timer `i`: evenly spread over [min, max].
    func period(_ i: Int) -> Int64 {
        guard timers > 1 else { return minPeriodNs }
        return minPeriodNs + Int64(i) * (maxPeriodNs - minPeriodNs) / Int64(timers - 1)
    }
}

/// What one run counts as its handlers fire.
struct FireCounts: Sendable {
    var fires = 0
    var early = 0
    var lateBeyondLeeway = 0
    var missed = 0
}

struct CoalescingFigures: Sendable, Encodable {
    var name: String
    var leewayNs: Int64
    var timers: Int
    var seconds: Double
    var counts = FireCounts()
    /// Engine: its thread's wake-ups; Dispatch: the process's context switches.
    var wakeups: Int64 = 0
    var contextSwitches: Int64 = 0
    var cpuNs: Int64 = 0
    var lateness = LatencySummary()

    var wakeupsPerSecond: Double { seconds > 0 ? Double(wakeups) / seconds : 0 }
    var contextSwitchesPerSecond: Double { seconds > 0 ? Double(contextSwitches) / seconds : 0 }
    var cpuSeconds: Double { Double(cpuNs) / 1e9 }
    var withinWindow: Double {
        counts.fires > 0 ? Double(counts.fires - counts.early - counts.lateBeyondLeeway) / Double(counts.fires) : 0
    }

    enum CodingKeys: String, CodingKey {
        case name, leewayNs, fires, early, lateBeyondLeeway, missed, seconds, lateness = "latenessNs"
        case wakeupsPerSecond = "wakeupsPerS", contextSwitchesPerSecond = "contextSwitchesPerS"
        case cpuSeconds = "cpuS", withinWindow
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(leewayNs, forKey: .leewayNs)
        try c.encode(counts.fires, forKey: .fires)
        try c.encode(counts.early, forKey: .early)
        try c.encode(counts.lateBeyondLeeway, forKey: .lateBeyondLeeway)
        try c.encode(counts.missed, forKey: .missed)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(lateness, forKey: .lateness)
        try c.encode(wakeupsPerSecond.rounded(toPlaces: 1), forKey: .wakeupsPerSecond)
        try c.encode(contextSwitchesPerSecond.rounded(toPlaces: 1), forKey: .contextSwitchesPerSecond)
        try c.encode(cpuSeconds.rounded(toPlaces: 6), forKey: .cpuSeconds)
        try c.encode(withinWindow, forKey: .withinWindow)
    }
}

struct CoalescingResult: Sendable, Encodable {
    var config: CoalescingConfig
    var runs: [CoalescingFigures]
    var machineLoad: MachineLoad?

    enum CodingKeys: CodingKey {
        case name, timers, minPeriodNs, maxPeriodNs, durationS, contenders, machineLoad
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Coalescing.name, forKey: .name)
        try c.encode(config.timers, forKey: .timers)
        try c.encode(config.minPeriodNs, forKey: .minPeriodNs)
        try c.encode(config.maxPeriodNs, forKey: .maxPeriodNs)
        try c.encode(Double(config.durationNs) / 1e9, forKey: .durationS)
        try c.encode(runs, forKey: .contenders)
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
    }

    func run(_ name: String, leewayNs: Int64) -> CoalescingFigures? {
        runs.first { $0.name == name && $0.leewayNs == leewayNs }
    }
}

/// Counters of one run. Written only by the thread firing the handlers (the
/// engine thread, or the serial queue); read after every timer is cancelled.
final class CoalescingTally: @unchecked Sendable {
    let stopAt: Int64
    let leeway: Int64
    let samples: SampleBuffer
    var counts = FireCounts()
    // Dispatch only: each timer's grid, and its source.
    var grids: [TickGrid] = []
    var sources: [DispatchSourceTimer] = []

    init(stopAt: Int64, leeway: Int64, capacity: Int) {
        self.stopAt = stopAt
        self.leeway = leeway
        self.samples = SampleBuffer(capacity: capacity)
    }

    @inline(__always)
    func record(lateness: Int64, early isEarly: Bool) {
        counts.fires += 1
        if isEarly { counts.early += 1 }
        if lateness > leeway { counts.lateBeyondLeeway += 1 }
        samples.append(lateness)
    }

    func engineFired(_ tick: Tick) {
        let now = monoNow()
        guard now <= stopAt else { return }
        let lateness = now - tick.deadline.nanoseconds  // the bench's reading, as for Dispatch's sources
        record(lateness: lateness, early: lateness < 0)
        counts.missed += Int(tick.missed)
    }

    func dispatchFired(_ i: Int) {
        let now = monoNow()
        guard now <= stopAt else { return }
        let n = Swift.max(1, Int(sources[i].data))
        grids[i].fire(missed: n - 1)
        counts.missed += n - 1
        // Against the latest tick this call stands for, as the engine's Tick reports it.
        let lateness = now - grids[i].deadline(grids[i].lastServed)
        record(lateness: lateness, early: lateness < 0)
    }
}

enum Coalescing {
    static let name = "coalescing"
    static let engineName = "TimerScheduler"
    static let dispatchName = "DispatchSourceTimer"

    static func run(_ config: CoalescingConfig) async throws -> CoalescingResult {
        var runs: [CoalescingFigures] = []
        let total = config.leewaysNs.count * 2
        var index = 0
        for leeway in config.leewaysNs {
            for name in [engineName, dispatchName] {
                index += 1
                Watchdog.shared.arm("\(self.name) \(name) leeway \(Fmt.duration(leeway))",
                                    seconds: Double(config.durationNs) / 1e9 * 3 + 20)
                let figures = try await onDedicatedThread(name: "bench-coalesce") {
                    name == engineName ? try runEngine(config, leeway: leeway)
                                       : runDispatch(config, leeway: leeway)
                }
                Watchdog.shared.disarm()
                runs.append(figures)
                progress("[\(self.name)] run \(index)/\(total): \(name) leeway \(Fmt.duration(leeway)): "
                         + "\(figures.counts.fires) fires, \(Fmt.fixed(figures.wakeupsPerSecond, 0)) wake-ups/s")
            }
        }
        return CoalescingResult(config: config, runs: runs)
    }

    static func capacity(_ config: CoalescingConfig) -> Int {
        (0..<config.timers).reduce(0) { $0 + Int(config.durationNs / config.period($1)) + 4 }
    }

    /// Waits on this (dedicated) thread until `deadline` without spinning.
    static func sleep(until deadline: Int64) {
        _ = try? PrecisionClock().wait(until: .init(nanoseconds: deadline), strategy: .sleep)
    }

    static func runEngine(_ config: CoalescingConfig, leeway: Int64) throws -> CoalescingFigures {
        let scheduler = try TimerScheduler(options: .init(name: "bench-co"))
        let t0 = monoNow() + 50_000_000
        let stopAt = t0 + config.durationNs
        let tally = CoalescingTally(stopAt: stopAt, leeway: leeway, capacity: capacity(config))
        var timers: [RepeatingTimer] = []
        timers.reserveCapacity(config.timers)
        for i in 0..<config.timers {
            let period = config.period(i)
            timers.append(try scheduler.repeating(
                every: .nanoseconds(period), startingAt: .init(nanoseconds: t0 + period),
                leeway: .nanoseconds(leeway), policy: .skip, delivery: .inline
            ) { tick in
                tally.engineFired(tick)
            })
        }
        sleep(until: t0)
        let w0 = scheduler.statistics.wakeups
        let cs0 = processContextSwitches()
        let cpu0 = processCPUNanoseconds()
        let real0 = monoNow()
        sleep(until: stopAt)
        let w1 = scheduler.statistics.wakeups
        let cs1 = processContextSwitches()
        let cpu1 = processCPUNanoseconds()
        let real1 = monoNow()
        for t in timers { t.cancel() }
        timers.removeAll()

        var figures = CoalescingFigures(name: engineName, leewayNs: leeway, timers: config.timers,
                                        seconds: Double(real1 - real0) / 1e9)
        figures.wakeups = Int64(w1 &- w0)
        figures.contextSwitches = cs1 - cs0
        figures.cpuNs = cpu1 - cpu0
        fill(&figures, from: tally)
        withExtendedLifetime(scheduler) {}
        return figures
    }

    static func runDispatch(_ config: CoalescingConfig, leeway: Int64) -> CoalescingFigures {
        let queue = DispatchQueue(label: "bench.coalescing")
        let t0 = monoNow() + 50_000_000
        let stopAt = t0 + config.durationNs
        let tally = CoalescingTally(stopAt: stopAt, leeway: leeway, capacity: capacity(config))
        tally.grids = (0..<config.timers).map { TickGrid(start: t0 + config.period($0), interval: config.period($0)) }
        tally.sources = (0..<config.timers).map { _ in DispatchSource.makeTimerSource(flags: [], queue: queue) }
        for i in 0..<config.timers {
            let source = tally.sources[i]
            source.setEventHandler { tally.dispatchFired(i) }
            let grid = tally.grids[i]
            source.schedule(deadline: DispatchTime(uptimeNanoseconds: UInt64(grid.start)),
                            repeating: .nanoseconds(Int(grid.interval)), leeway: .nanoseconds(Int(leeway)))
            source.activate()
        }
        sleep(until: t0)
        let cs0 = processContextSwitches()
        let cpu0 = processCPUNanoseconds()
        let real0 = monoNow()
        sleep(until: stopAt)
        let cs1 = processContextSwitches()
        let cpu1 = processCPUNanoseconds()
        let real1 = monoNow()
        for s in tally.sources { s.cancel() }
        queue.sync {}
        for s in tally.sources { s.setEventHandler(handler: nil) }

        var figures = CoalescingFigures(name: dispatchName, leewayNs: leeway, timers: config.timers,
                                        seconds: Double(real1 - real0) / 1e9)
        figures.wakeups = cs1 - cs0
        figures.contextSwitches = cs1 - cs0
        figures.cpuNs = cpu1 - cpu0
        fill(&figures, from: tally)
        tally.sources = []
        return figures
    }

    static func fill(_ figures: inout CoalescingFigures, from tally: CoalescingTally) {
        figures.counts = tally.counts
        var acc = LatenessAccumulator()
        acc.add(tally.samples.samples, missedAbove: .max)
        figures.lateness = acc.summary
    }
}
