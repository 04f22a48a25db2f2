//===----------------------------------------------------------------------===//
// The bench's targets, evaluated from the figures measured (nothing hard-coded
// but the limits themselves).
//===----------------------------------------------------------------------===//

struct TargetCheck: Sendable, Encodable {
    var name: String
    var scenario: String
    /// The measured figure (nil when the scenario or a contender is missing).
    var value: Double?
    /// The limit it is compared with.
    var limit: Double?
    var measured: String
    var limitText: String
    /// nil: skipped (not measured).
    var pass: Bool?
    /// The JSON key of the figure it checks, where its table row shows the
    /// target (the scale table).
    var figure: String? = nil
}

enum Targets {
    /// What a check says of a figure that is missing for no stated reason.
    static let notMeasured = "not measured"

    /// A check that `value` is at most `limit`; skipped, and saying `unmeasured`,
    /// when either is missing (``evaluate(_:)`` fails one whose figure is
    /// missing from a scenario that ran).
    static func atMost(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double?, figure: String? = nil,
                       unmeasured: String = notMeasured,
                       show: (Double) -> String, limitText: (Double) -> String) -> TargetCheck {
        guard let value, let limit else {
            return TargetCheck(name: name, scenario: scenario, value: value, measured: value.map(show) ?? unmeasured,
                               limitText: limit.map(limitText) ?? "not measured", pass: nil, figure: figure)
        }
        return TargetCheck(name: name, scenario: scenario, value: value, limit: limit, measured: show(value),
                           limitText: limitText(limit), pass: value <= limit, figure: figure)
    }

    /// A check that `value` is at least `limit`.
    static func atLeast(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double, figure: String? = nil,
                        show: (Double) -> String, limitText: String) -> TargetCheck {
        guard let value else {
            return TargetCheck(name: name, scenario: scenario, measured: notMeasured, limitText: limitText,
                               pass: nil, figure: figure)
        }
        return TargetCheck(name: name, scenario: scenario, value: value, limit: limit, measured: show(value),
                           limitText: limitText, pass: value >= limit, figure: figure)
    }

    static func evaluate(_ r: BenchResults) -> [TargetCheck] {
        var checks: [TargetCheck] = []

        func atMost(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double?,
                    show: (Double) -> String, limitText: (Double) -> String) {
            checks.append(Targets.atMost(name, scenario, value, limit, show: show, limitText: limitText))
        }

        func atLeast(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double,
                     show: (Double) -> String, limitText: String) {
            checks.append(Targets.atLeast(name, scenario, value, limit, show: show, limitText: limitText))
        }

        let dur: (Double) -> String = { Fmt.duration($0) }

        // periodic-1khz
        let P = Periodic.name
        let p = r.periodic
        let dst = p?.figures(Periodic.dispatchSourceName)
        let adaptive = p?.figures(Periodic.adaptiveName)
        let sleep = p?.figures(Periodic.sleepName)
        let asyncSleep = p?.figures(Periodic.asyncSleepName)
        let taskSleep = p?.figures("Task.sleep")
        let repeating = p?.figures(Periodic.repeatingName)
        let interval = Double(p?.config.intervalNs ?? 1_000_000)

        atMost("\(Periodic.adaptiveName) p50 ≤ 1 µs", P, adaptive.map { Double($0.lateness.p50) }, 1_000,
               show: dur, limitText: { "≤ " + dur($0) })
        atMost("\(Periodic.adaptiveName) p99 ≤ 0.35× DispatchSourceTimer p99", P, adaptive.map { Double($0.lateness.p99) },
               dst.map { 0.35 * Double($0.lateness.p99) }, show: dur, limitText: { "≤ " + dur($0) })
        atMost("\(Periodic.adaptiveName) CPU ≤ 10% of a core", P, adaptive.map { $0.cpuNsPerTick }, 0.10 * interval,
               show: { dur($0) + "/tick (" + Fmt.percent($0 / interval) + ")" },
               limitText: { "≤ " + dur($0) + "/tick" })
        atMost("\(Periodic.sleepName) p50 ≤ 0.75× DispatchSourceTimer p50", P, sleep.map { Double($0.lateness.p50) },
               dst.map { 0.75 * Double($0.lateness.p50) }, show: dur, limitText: { "≤ " + dur($0) })
        atMost("\(Periodic.asyncSleepName) p50 ≤ 0.5× Task.sleep p50", P, asyncSleep.map { Double($0.lateness.p50) },
               taskSleep.map { 0.5 * Double($0.lateness.p50) }, show: dur, limitText: { "≤ " + dur($0) })
        for name in [Periodic.sleepName, Periodic.adaptiveName, Periodic.spinName, Periodic.asyncSleepName] {
            let f = p?.figures(name)
            atMost("\(name): zero early wakes", P, f.map { Double($0.early + $0.earlyByOwnClock) }, 0,
                   show: { "\(Int($0)) early" }, limitText: { _ in "0" })
        }
        // Async code on the scheduler as its executor.
        for name in [Periodic.executorName, Periodic.actorName] {
            let f = p?.figures(name)
            atMost("\(name) p50 ≤ 1 µs", P, f.map { Double($0.lateness.p50) }, 1_000,
                   show: dur, limitText: { "≤ " + dur($0) })
            atMost("\(name) p99 ≤ 0.2× Task.sleep p99", P, f.map { Double($0.lateness.p99) },
                   taskSleep.map { 0.2 * Double($0.lateness.p99) }, show: dur, limitText: { "≤ " + dur($0) })
            atMost("\(name): zero early wakes", P, f.map { Double($0.early + $0.earlyByOwnClock) }, 0,
                   show: { "\(Int($0)) early" }, limitText: { _ in "0" })
            atMost("\(name) CPU ≤ 10% of a core", P, f.map { $0.cpuNsPerTick }, 0.10 * interval,
                   show: { dur($0) + "/tick (" + Fmt.percent($0 / interval) + ")" },
                   limitText: { "≤ " + dur($0) + "/tick" })
        }
        atMost("RepeatingTimer p50 ≤ 2 µs", P, repeating.map { Double($0.lateness.p50) }, 2_000,
               show: dur, limitText: { "≤ " + dur($0) })
        atMost("RepeatingTimer p99 ≤ 0.35× DispatchSourceTimer p99", P, repeating.map { Double($0.lateness.p99) },
               dst.map { 0.35 * Double($0.lateness.p99) }, show: dur, limitText: { "≤ " + dur($0) })
        // The scheduler's own statistics agree with the bench's samples (StatisticsCheck.swift):
        // the same fires, and the same lateness within the tolerance.
        let check = repeating?.statisticsCheck
        atMost("RepeatingTimer statistics count the bench's fires", P,
               check.map { Double(($0.scheduler.samples - $0.bench.samples).magnitude) }, 0,
               show: { [check] d in
                   let sides = check.map { "scheduler \(Fmt.count($0.scheduler.samples)) vs bench \(Fmt.count($0.bench.samples))" }
                   return (sides ?? "") + ", \(Int(d)) apart"
               }, limitText: { _ in "0 apart" })
        for percentile in StatisticsCheck.Percentile.allCases {
            let sides = check.map { "scheduler \(dur(Double($0.scheduler[percentile]))) vs "
                + "bench \(dur(Double($0.bench[percentile])))" } ?? ""
            atMost("RepeatingTimer statistics \(percentile.rawValue) within 10 % or 200 ns of the bench's", P,
                   check.map { $0.difference(percentile) },
                   check.map { StatisticsCheck.tolerance(bench: $0.bench[percentile]) },
                   show: { sides + ", Δ " + dur($0) }, limitText: { "≤ " + dur($0) })
        }

        // clock-read
        let c = r.clockRead
        atMost("PrecisionClock.now ≤ 1.1× clock_gettime", ClockRead.name, c?.nsPerOp("PrecisionClock.now"),
               c?.nsPerOp("clock_gettime").map { 1.1 * $0 },
               show: { Fmt.fixed($0, 2) + " ns" }, limitText: { "≤ " + Fmt.fixed($0, 2) + " ns" })
        atMost("\(ClockRead.recordName) ≤ 20 ns (per fire)", ClockRead.name, c?.nsPerOp(ClockRead.recordName), 20,
               show: { Fmt.fixed($0, 2) + " ns" }, limitText: { "≤ " + Fmt.fixed($0, 0) + " ns" })

        // coalescing, at 5 ms leeway
        let C = Coalescing.name
        let leeway: Int64 = 5_000_000
        let engine = r.coalescing?.run(Coalescing.engineName, leewayNs: leeway)
        let dispatch = r.coalescing?.run(Coalescing.dispatchName, leewayNs: leeway)
        // The same yardstick on both sides: the process's context switches (the
        // engine's own count of its wake-ups is in the table beside them).
        atMost("coalescing @5 ms: engine context switches ≤ 0.05× Dispatch's", C, engine?.contextSwitchesPerSecond,
               dispatch.map { 0.05 * $0.contextSwitchesPerSecond },
               show: { Fmt.fixed($0, 1) + "/s" }, limitText: { "≤ " + Fmt.fixed($0, 1) + "/s" })
        atMost("coalescing @5 ms: engine CPU ≤ 0.25× Dispatch", C, engine?.cpuSeconds,
               dispatch.map { 0.25 * $0.cpuSeconds },
               show: { Fmt.fixed($0, 4) + " s" }, limitText: { "≤ " + Fmt.fixed($0, 4) + " s" })
        atMost("coalescing @5 ms: engine zero early fires", C, engine.map { Double($0.counts.early) }, 0,
               show: { "\(Int($0)) early" }, limitText: { _ in "0" })
        atLeast("coalescing @5 ms: engine ≥ 99% within window", C, engine?.withinWindow, 0.99,
                show: { Fmt.percent($0) }, limitText: "≥ 99.00 %")

        checks += scale(r.scale)
        // Only the targets of the scenarios that ran.
        let ran: Set<String> = Set([r.periodic.map { _ in Periodic.name }, r.clockRead.map { _ in ClockRead.name },
                                    r.coalescing.map { _ in Coalescing.name }, r.scale.map { _ in Scale.name }]
            .compactMap { $0 })
        return checks.filter { ran.contains($0.scenario) }.map(failingMissingFigures)
    }

    /// A figure under test missing from a scenario that ran, for no reason
    /// its check states (a contender that failed, or recorded nothing), fails
    /// its target instead of skipping it. A missing reference figure (the
    /// limit) still skips it.
    static func failingMissingFigures(_ check: TargetCheck) -> TargetCheck {
        guard check.value == nil, check.measured == notMeasured else { return check }
        var failed = check
        failed.measured = "missing: its contender failed or recorded nothing"
        failed.pass = false
        return failed
    }

    /// The scale targets, stated for `Scale.statedTimers` live timers. A run
    /// with fewer (--quick) is checked where a figure does not grow with the
    /// count (rates, bytes per timer, the precise timer's lateness), named with
    /// the count it had; a total over all the timers (cancelling them all, a
    /// batch of that many) is not evaluated at another count.
    static func scale(_ result: ScaleResult?) -> [TargetCheck] {
        let S = Scale.name
        let K = ScaleFigures.Key.self
        let s = result?.figures
        let stated = Scale.statedTimers
        let n = Fmt.count(s?.timers ?? stated)
        let ms: (Double) -> String = { Fmt.fixed($0, 2) + " ms" }
        let limitMs: (Double) -> String = { "≤ " + Fmt.fixed($0, 0) + " ms" }
        let dur: (Double) -> String = { Fmt.duration($0) }
        let bytes: (Double) -> String = { Fmt.fixed($0, 1) + " B" }
        /// A batch's figure, unless the batch is missing or its scheduling overran its lead.
        func batch(_ size: Int, _ figure: (ScaleFigures.Batch) -> Int64) -> (value: Double?, unmeasured: String) {
            guard let b = s?.batch(size) else { return (nil, "not measured (no batch of \(Fmt.count(size)))") }
            return b.overran ? (nil, "not measured (scheduling overran the lead)") : (Double(figure(b)) / 1e6, "")
        }
        let fire100k = batch(100_000, \.lastNs)
        let fire1m = batch(stated, \.lastNs)
        let first1m = batch(stated, \.firstNs)
        let atStated = s?.timers == stated
        return [
            atLeast("scale: schedule+cancel ≥ 1,000,000/s with \(n) live", S, s?.scheduleCancel.perSecond, 1_000_000,
                    figure: K.scheduleCancel, show: Fmt.rate, limitText: "≥ 1.00 M/s"),
            atLeast("scale: re-arm in place ≥ 10,000,000/s with \(n) live", S, s?.rearm.perSecond, 10_000_000,
                    figure: K.rearm, show: Fmt.rate, limitText: "≥ 10.0 M/s"),
            atMost("scale: bytes per live timer ≤ 256", S, s?.bytes.perTimer, 256, figure: K.bytes,
                   show: bytes, limitText: { "≤ " + Fmt.fixed($0, 0) + " B" }),
            atMost("scale: bytes per live timer ≤ 96", S, s?.bytes.perTimer, 96, figure: K.bytes,
                   show: bytes, limitText: { "≤ " + Fmt.fixed($0, 0) + " B" }),
            atMost("scale: cancel all \(Fmt.count(stated)) live ≤ 100 ms", S,
                   atStated ? s.map { Double($0.cancelAllNs) / 1e6 } : nil, 100, figure: K.cancelAll,
                   unmeasured: "not evaluated with \(n) live", show: ms, limitText: limitMs),
            atMost("scale: fire 100,000 same-instant timers ≤ 50 ms", S, fire100k.value, 50,
                   figure: K.fire(100_000), unmeasured: fire100k.unmeasured, show: ms, limitText: limitMs),
            atMost("scale: fire \(Fmt.count(stated)) same-instant timers ≤ 100 ms", S, fire1m.value, 100,
                   figure: K.fire(stated), unmeasured: fire1m.unmeasured, show: ms, limitText: limitMs),
            atMost("scale: first of \(Fmt.count(stated)) same-instant timers ≤ 1 ms", S, first1m.value, 1,
                   figure: K.fireFirst(stated), unmeasured: first1m.unmeasured, show: ms, limitText: limitMs),
            atMost("scale: precise 1 kHz timer p50 ≤ 2 µs with \(n) live, under re-arm load", S,
                   s.map { Double($0.precise.loaded.summary.p50) }, 2_000, figure: K.preciseP50,
                   show: dur, limitText: { "≤ " + dur($0) }),
            atMost("scale: precise 1 kHz timer p99 under re-arm load ≤ 1.5× its idle p99", S,
                   s.map { Double($0.precise.loaded.summary.p99) }, s.map { 1.5 * Double($0.precise.idle.summary.p99) },
                   figure: K.preciseP99, show: dur, limitText: { "≤ " + dur($0) }),
        ]
    }
}
