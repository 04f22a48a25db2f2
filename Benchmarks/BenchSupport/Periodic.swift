//===----------------------------------------------------------------------===//
// Scenario `periodic-1khz`: a drift-free 1 kHz loop of absolute deadlines
// (tick k due at start + k × interval). Every contender runs `ticks` ticks per
// round, rounds interleaved (A, B, C, A, B, C, …) so machine noise hits each
// alike.
//
// One rule for every contender, so none is flattered (TickGrid.swift): a wake
// serves every grid tick due by then; its lateness is the wake minus the
// earliest deadline it serves, and the other ticks it swallows count as missed.
// (Catching up tick by tick would record 3.5, 2.5, 1.5 and 0.5 intervals for a
// wake 3.5 intervals late, instead of one sample and 3 missed ticks.)
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import NIOPosix
import PrecisionTimer

struct PeriodicConfig: Sendable, Encodable {
    var rounds: Int
    var ticks: Int
    var warmupTicks: Int
    var intervalNs: Int64 = 1_000_000
    /// The scenario's name (`periodic-1khz` or `periodic-1khz-load`).
    var scenario: String = Periodic.name
    /// CPU-bound competitor threads running during the rounds (the load scenario).
    var hogs: Int = 0

    enum CodingKeys: String, CodingKey {
        case scenario = "name", ticks = "ticksPerRound", rounds, warmupTicks, intervalNs, hogs
    }
}

/// What one round of one contender observed besides its lateness samples.
struct RoundOutcome: Sendable {
    /// CPU time spent (thread or process, see ``PeriodicContender/cpuScope``).
    var cpuNs: Int64
    /// Grid ticks that got no call of their own (the timer coalesced them).
    var skipped: Int = 0
    /// Handler calls whose reported deadline was not on the drift-free grid.
    var gridMismatches: Int = 0
    /// Handler calls that our own clock read placed before the deadline.
    var earlyByOwnClock: Int = 0
    /// Each handler call's lateness against its own tick's deadline, read by
    /// the bench first thing in the handler: the basis the scheduler's
    /// statistics are checked on (StatisticsCheck.swift); empty for contenders
    /// that have no ticks.
    var tickLatenessNs: [Int64] = []
}

struct PeriodicContender: Sendable {
    enum CPUScope: String, Sendable, Encodable {
        /// CPU of the waiting thread, of the whole process, or of a child process.
        case thread, process, child
    }

    let name: String
    let cpuScope: CPUScope
    /// What a reader of the periodic tables needs to know of this contender,
    /// printed under them (nil: nothing).
    var note: String?
    /// The scheduler that runs this contender's timer and nothing else during
    /// the measured rounds, whose own statistics the bench checks against the
    /// contender's samples (StatisticsCheck.swift); nil: no check.
    var statisticsScheduler: TimerScheduler?
    /// Runs one round of `ticks` ticks of `intervalNs`, appending one signed
    /// lateness sample per handler call / wake to the buffer.
    let run: @Sendable (_ ticks: Int, _ intervalNs: Int64, _ samples: SampleBuffer) async throws -> RoundOutcome
}

/// One contender's figures over the whole scenario (one object of a scenario's
/// `contenders` in the JSON).
struct PeriodicFigures: Sendable, Encodable {
    var name: String
    var cpuScope: PeriodicContender.CPUScope
    /// The contender's ``PeriodicContender/note`` (the text report's, not the JSON's).
    var note: String?
    var ticks = 0
    var early = 0
    var missed = 0
    var samples = 0
    var lateness = LatencySummary()
    var cpuNsPerTick: Double = 0
    var gridMismatches = 0
    var earlyByOwnClock = 0
    var error: String?
    /// Every lateness sample, in the order taken (rounds concatenated); for
    /// --csv, the plots and the drift figures. Filled between rounds.
    var raw: [Int64] = []
    /// The lateness CDF (from the HdrHistogram).
    var cdf: [CDFPoint] = []
    /// drift: mean lateness per tenth of the run, and the last wake's lateness.
    var meanLatenessByTenthNs: [Double]?
    var finalScheduleErrorNs: Int64?
    /// p50 and p99 lateness as ratios to DispatchSourceTimer's (set by PeriodicResult).
    var ratioP50ToDispatch: Double?
    var ratioP99ToDispatch: Double?
    /// framelink: frames dropped (= missed; set by PeriodicResult).
    var dropped: Int?
    /// The scheduler's own statistics beside the bench's samples (a contender
    /// with a ``PeriodicContender/statisticsScheduler``).
    var statisticsCheck: StatisticsCheck?

    enum CodingKeys: String, CodingKey {
        case name, ticks, early, missed, samples, cpuNsPerTick, cpuScope, gridMismatches, earlyByOwnClock, error
        case lateness = "latenessNs", cdf, meanLatenessByTenthNs, finalScheduleErrorNs, dropped
        case ratioP50ToDispatch, ratioP99ToDispatch
        case statsP50Ns, statsP99Ns, statsSamples
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(ticks, forKey: .ticks)
        try c.encode(early, forKey: .early)
        try c.encode(missed, forKey: .missed)
        try c.encode(samples, forKey: .samples)
        try c.encode(lateness, forKey: .lateness)
        try c.encode(cpuNsPerTick.rounded(toPlaces: 1), forKey: .cpuNsPerTick)
        try c.encode(cpuScope, forKey: .cpuScope)
        try c.encode(gridMismatches, forKey: .gridMismatches)
        try c.encode(earlyByOwnClock, forKey: .earlyByOwnClock)
        try c.encodeIfPresent(error, forKey: .error)
        try c.encode(cdf, forKey: .cdf)
        try c.encodeIfPresent(ratioP50ToDispatch?.rounded(toPlaces: 3), forKey: .ratioP50ToDispatch)
        try c.encodeIfPresent(ratioP99ToDispatch?.rounded(toPlaces: 3), forKey: .ratioP99ToDispatch)
        try c.encodeIfPresent(meanLatenessByTenthNs?.map { $0.rounded(toPlaces: 0) }, forKey: .meanLatenessByTenthNs)
        try c.encodeIfPresent(finalScheduleErrorNs, forKey: .finalScheduleErrorNs)
        try c.encodeIfPresent(dropped, forKey: .dropped)
        try c.encodeIfPresent(statisticsCheck?.scheduler.p50, forKey: .statsP50Ns)
        try c.encodeIfPresent(statisticsCheck?.scheduler.p99, forKey: .statsP99Ns)
        try c.encodeIfPresent(statisticsCheck?.scheduler.samples, forKey: .statsSamples)
    }
}

/// A lateness scenario (periodic-1khz, periodic-1khz-load, framelink, drift):
/// one JSON object of `scenarios`, its config's keys beside its own.
struct PeriodicResult: Sendable, Encodable {
    var config: PeriodicConfig
    private(set) var contenders: [PeriodicFigures]
    /// Remarks on how the scenario ran (skipped contenders, realtime refused, …).
    var notes: [String] = []
    /// `AdaptiveMargin.current` after the last round (the spin margin
    /// `PrecisionClock.wait(.adaptive)` had learned).
    var adaptiveMarginNs: Int64
    /// `SleepLead.current` after the last round (how early
    /// `PrecisionClock.wait(.sleep)` had learned to aim the kernel's timer).
    var sleepLeadNs: Int64 = 0
    var machineLoad: MachineLoad?
    /// drift runs its contenders concurrently, the others interleave rounds.
    var concurrent: Bool { config.scenario == Drift.name }

    /// Settles the figures that compare contenders: p50/p99 ratios to
    /// DispatchSourceTimer and, for framelink, frames dropped.
    init(config: PeriodicConfig, contenders: [PeriodicFigures], notes: [String] = [], adaptiveMarginNs: Int64,
         sleepLeadNs: Int64 = 0) {
        self.config = config
        self.notes = notes
        self.adaptiveMarginNs = adaptiveMarginNs
        self.sleepLeadNs = sleepLeadNs
        self.contenders = contenders
        let dst = figures(Periodic.dispatchSourceName)?.lateness
        func ratio(_ a: Int64, _ b: Int64?) -> Double? { b.map { Double(a) / Double(Swift.max(1, $0)) } }
        for i in self.contenders.indices where self.contenders[i].samples > 0 {
            let l = self.contenders[i].lateness
            self.contenders[i].ratioP50ToDispatch = ratio(l.p50, dst?.p50)
            self.contenders[i].ratioP99ToDispatch = ratio(l.p99, dst?.p99)
        }
        if config.scenario == FrameLinkScenario.name {
            for i in self.contenders.indices { self.contenders[i].dropped = self.contenders[i].missed }
        }
    }

    func figures(_ name: String) -> PeriodicFigures? {
        contenders.first { $0.name == name && $0.error == nil && $0.samples > 0 }
    }

    enum CodingKeys: CodingKey {
        case adaptiveMarginNs, sleepLeadNs, contenders, machineLoad, concurrent, notes
    }

    func encode(to encoder: any Encoder) throws {
        try config.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(adaptiveMarginNs, forKey: .adaptiveMarginNs)
        try c.encode(sleepLeadNs, forKey: .sleepLeadNs)
        try c.encode(contenders, forKey: .contenders)
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
        try c.encode(concurrent, forKey: .concurrent)
        try c.encode(notes, forKey: .notes)
    }
}

enum Periodic {
    static let name = "periodic-1khz"
    static let dispatchSourceName = "DispatchSourceTimer"

    // MARK: - Driver

    /// `periodic-1khz` (or, with `config.hogs`, its load variant) over `contenders`.
    static func run(_ config: PeriodicConfig, contenders: [PeriodicContender], notes: [String] = [])
        async throws -> PeriodicResult
    {
        let name = config.scenario
        let interval = config.intervalNs
        let buffer = SampleBuffer(capacity: Swift.max(config.ticks, config.warmupTicks) + 16)
        var accumulators = [LatenessAccumulator](repeating: LatenessAccumulator(), count: contenders.count)
        var checks: [Int: StatisticsCheckAccumulator] = [:]  // by contender, for those with a statisticsScheduler
        var figures = contenders.map { PeriodicFigures(name: $0.name, cpuScope: $0.cpuScope, note: $0.note) }
        for i in figures.indices { figures[i].raw.reserveCapacity(config.rounds * config.ticks) }
        var cpuTotals = [Int64](repeating: 0, count: contenders.count)
        let budget = Double(Swift.max(config.ticks, config.warmupTicks)) * Double(interval) / 1e9 * 5 + 10
        let hogs = config.hogs > 0 ? Hogs(count: config.hogs) : nil
        defer { hogs?.stop() }

        func runOne(_ i: Int, ticks: Int, label: String) async -> RoundOutcome? {
            guard figures[i].error == nil else { return nil }
            buffer.reset()
            Watchdog.shared.arm("\(name) \(contenders[i].name) (\(label))", seconds: budget)
            defer { Watchdog.shared.disarm() }
            do {
                return try await contenders[i].run(ticks, interval, buffer)
            } catch {
                figures[i].error = "\(error)"
                progress("[\(name)] \(contenders[i].name) failed: \(error)")
                return nil
            }
        }

        if config.warmupTicks > 0 {
            progress("[\(name)] warm-up: \(config.warmupTicks) ticks per contender")
            for i in contenders.indices {
                _ = await runOne(i, ticks: config.warmupTicks, label: "warm-up")
            }
        }
        let began = monoNow()
        for round in 1...config.rounds {
            // A new order each round: no contender always follows the same one.
            for i in contenders.indices.shuffled() {
                // Its statistics cover this round alone: warm-up and other rounds are left out.
                let checked = contenders[i].statisticsScheduler
                checked?.resetStatistics()
                guard let outcome = await runOne(i, ticks: config.ticks, label: "round \(round)") else { continue }
                if let checked {  // read after the round's timer was cancelled
                    checks[i, default: StatisticsCheckAccumulator()].add(
                        scheduler: checked.statistics.clock(.monotonic).lateness, bench: outcome.tickLatenessNs)
                }
                accumulators[i].add(buffer.samples, missedAbove: .max)  // missed = skipped ticks, below
                accumulators[i].addSkipped(outcome.skipped)
                figures[i].raw.append(contentsOf: buffer.samples)
                cpuTotals[i] += outcome.cpuNs
                figures[i].ticks += config.ticks
                figures[i].gridMismatches += outcome.gridMismatches
                figures[i].earlyByOwnClock += outcome.earlyByOwnClock
            }
            let elapsed = Double(monoNow() - began) / 1e9
            progress("[\(name)] round \(round)/\(config.rounds) done (\(Fmt.fixed(elapsed, 1)) s; "
                     + "learned adaptive margin \(Fmt.duration(Double(AdaptiveMargin.current.benchNanoseconds))), "
                     + "sleep lead \(Fmt.duration(Double(SleepLead.current.benchNanoseconds))))")
        }
        hogs?.stop()
        for i in contenders.indices {
            figures[i].early = accumulators[i].early
            figures[i].missed = accumulators[i].missed
            figures[i].samples = accumulators[i].samples
            figures[i].lateness = accumulators[i].summary
            figures[i].cdf = accumulators[i].cdf
            figures[i].cpuNsPerTick = figures[i].ticks > 0 ? Double(cpuTotals[i]) / Double(figures[i].ticks) : 0
            figures[i].statisticsCheck = checks[i]?.check
        }
        var notes = notes
        if let hogs { notes.append(hogs.description) }
        return PeriodicResult(config: config, contenders: figures, notes: notes,
                              adaptiveMarginNs: AdaptiveMargin.current.benchNanoseconds,
                              sleepLeadNs: SleepLead.current.benchNanoseconds)
    }
}
