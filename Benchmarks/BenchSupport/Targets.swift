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
}

enum Targets {
    static func evaluate(_ r: BenchResults) -> [TargetCheck] {
        var checks: [TargetCheck] = []

        func atMost(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double?,
                    show: (Double) -> String, limitText: (Double) -> String) {
            guard let value, let limit else {
                checks.append(TargetCheck(name: name, scenario: scenario, measured: "not measured",
                                          limitText: limit.map(limitText) ?? "–", pass: nil))
                return
            }
            checks.append(TargetCheck(name: name, scenario: scenario, value: value, limit: limit,
                                      measured: show(value), limitText: limitText(limit), pass: value <= limit))
        }

        func atLeast(_ name: String, _ scenario: String, _ value: Double?, _ limit: Double,
                     show: (Double) -> String, limitText: String) {
            guard let value else {
                checks.append(TargetCheck(name: name, scenario: scenario, measured: "not measured",
                                          limitText: limitText, pass: nil))
                return
            }
            checks.append(TargetCheck(name: name, scenario: scenario, value: value, limit: limit,
                                      measured: show(value), limitText: limitText, pass: value >= limit))
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
        // The scheduler's own statistics agree with the bench's samples (StatisticsCheck.swift).
        let check = repeating?.statisticsCheck
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
        atMost("coalescing @5 ms: engine wake-ups ≤ 0.05× Dispatch", C, engine?.wakeupsPerSecond,
               dispatch.map { 0.05 * $0.wakeupsPerSecond },
               show: { Fmt.fixed($0, 1) + "/s" }, limitText: { "≤ " + Fmt.fixed($0, 1) + "/s" })
        atMost("coalescing @5 ms: engine CPU ≤ 0.25× Dispatch", C, engine?.cpuSeconds,
               dispatch.map { 0.25 * $0.cpuSeconds },
               show: { Fmt.fixed($0, 4) + " s" }, limitText: { "≤ " + Fmt.fixed($0, 4) + " s" })
        atMost("coalescing @5 ms: engine zero early fires", C, engine.map { Double($0.counts.early) }, 0,
               show: { "\(Int($0)) early" }, limitText: { _ in "0" })
        atLeast("coalescing @5 ms: engine ≥ 99% within window", C, engine?.withinWindow, 0.99,
                show: { Fmt.percent($0) }, limitText: "≥ 99.00 %")

        // scale
        let S = Scale.name
        let s = r.scale?.figures
        let n = s.map { Fmt.count($0.timers) } ?? "100,000"
        atLeast("scale: schedule+cancel ≥ 1,000,000/s with \(n) live", S, s?.scheduleCancelPerSecond, 1_000_000,
                show: { Fmt.rate($0) }, limitText: "≥ 1.00 M/s")
        atMost("scale: bytes per live timer ≤ 256", S, s?.bytes.perTimer, 256,
               show: { Fmt.fixed($0, 1) + " B" }, limitText: { "≤ " + Fmt.fixed($0, 0) + " B" })
        atMost("scale: fire \(n) same-instant timers ≤ 50 ms", S, s?.fireMs, 50,
               show: { Fmt.fixed($0, 2) + " ms" }, limitText: { "≤ " + Fmt.fixed($0, 0) + " ms" })
        // Only the targets of the scenarios that ran.
        let ran: Set<String> = Set([r.periodic.map { _ in Periodic.name }, r.clockRead.map { _ in ClockRead.name },
                                    r.coalescing.map { _ in Coalescing.name }, r.scale.map { _ in Scale.name }]
            .compactMap { $0 })
        return checks.filter { ran.contains($0.scenario) }
    }
}
