//===----------------------------------------------------------------------===//
// Scenario `drift`: a long run at 100 Hz (default 20 s, --quick 3 s, --drift-seconds N) on the
// same drift-free grid and lateness rule as periodic-1khz, to show whether
// lateness accumulates. Unlike periodic-1khz the contenders run CONCURRENTLY
// (each on its own thread, task or queue): drift is about accumulation over
// minutes, not about microseconds, and interleaving a minute-long run per
// contender would take ten minutes. Busy-waiting contenders are left out (a
// minute of spinning would only load the machine for the others).
//
// Reported per contender: the mean lateness in each tenth of the run (a
// drift-free timer stays flat; one that accumulates grows) and the final
// schedule error, the last wake's lateness against its grid tick. A naive
// relative loop (`Task.sleep(for:)` one interval at a time, tick k assumed
// due at start + k × interval) is included as the reference for what
// accumulation looks like; it is not one of the fair contenders.
//===----------------------------------------------------------------------===//
import CMonoClock
import Foundation
import NIOPosix
import PrecisionTimer

struct DriftConfig: Sendable {
    var intervalNs: Int64 = 10_000_000
    var ticks: Int

    var seconds: Double { Double(ticks) * Double(intervalNs) / 1e9 }
}

enum Drift {
    static let name = "drift"
    static let naiveName = "Task.sleep(for:) naive"

    static func contenders(engine: TimerScheduler, nio: MultiThreadedEventLoopGroup) -> [PeriodicContender] {
        [
            Periodic.wait(Periodic.sleepName, .sleep),
            Periodic.wait(Periodic.adaptiveName, .adaptive),
            PeriodicContender(name: Periodic.asyncSleepName, cpuScope: .process, run: Periodic.asyncSleep),
            PeriodicContender(name: Periodic.dispatchSourceName, cpuScope: .process, run: Periodic.dispatchSourceTimer),
            PeriodicContender(name: "DispatchQueue.asyncAfter", cpuScope: .process, run: Periodic.asyncAfter),
            PeriodicContender(name: "Task.sleep", cpuScope: .process, run: Periodic.taskSleep),
            Periodic.blocking("clock_nanosleep") { deadline in
                let rc = sleepUntilRetrying(deadline)
                if rc != 0 { throw PrecisionTimerError.system(PrecisionTimerError.Errno(rawValue: rc), operation: "clock_nanosleep") }
            },
            PeriodicContender(name: "RepeatingTimer", cpuScope: .process) { ticks, interval, samples in
                try await Periodic.repeatingTimer(engine, ticks, interval, samples)
            },
            PeriodicContender(name: Periodic.foundationTimerName, cpuScope: .thread, run: Periodic.foundationTimer),
            NIOTimers.repeatedTask(group: nio),
            PeriodicContender(name: naiveName, cpuScope: .process, run: naiveRelative),
        ]
    }

    /// `Task.sleep(for: interval)` in a loop: each sleep starts when the previous
    /// one ended, so every wake's lateness adds up.
    @Sendable
    static func naiveRelative(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws -> RoundOutcome {
        try await Task.detached {
            let clock = ContinuousClock()
            let start = clock.now
            for k in 1...ticks {
                try await Task.sleep(for: .nanoseconds(interval), tolerance: .zero)
                samples.append((clock.now - (start + .nanoseconds(Int64(k) * interval))).benchNanoseconds)
            }
            return RoundOutcome(cpuNs: 0)
        }.value
    }

    /// What one concurrently run contender returned.
    struct ContenderOutcome: Sendable {
        var index: Int
        var outcome: RoundOutcome?
        var error: String?
    }

    static func run(_ config: DriftConfig) async throws -> PeriodicResult {
        let engine = try TimerScheduler(options: .init(name: "bench-drift"))
        let nio = NIOTimers.group()
        let contenders = contenders(engine: engine, nio: nio)
        let buffers = contenders.map { _ in SampleBuffer(capacity: config.ticks + 16) }
        progress("[\(name)] \(contenders.count) contenders concurrently, \(config.ticks) ticks of "
                 + "\(Fmt.duration(config.intervalNs)) (\(Fmt.fixed(config.seconds, 0)) s)")
        Watchdog.shared.arm("\(name)", seconds: config.seconds * 2 + 30)
        defer { Watchdog.shared.disarm() }
        let ticker = Task {
            // A progress line every ~10 s for a long run.
            let began = monoNow()
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                if Task.isCancelled { break }
                progress("[\(name)] \(Fmt.fixed(Double(monoNow() - began) / 1e9, 0)) s of "
                         + "\(Fmt.fixed(config.seconds, 0)) s")
            }
        }
        let outcomes = await withTaskGroup(of: ContenderOutcome.self) { group in
            for index in contenders.indices {
                let contender = contenders[index]
                let buffer = buffers[index]
                let ticks = config.ticks
                let interval = config.intervalNs
                group.addTask {
                    do {
                        let outcome = try await contender.run(ticks, interval, buffer)
                        return ContenderOutcome(index: index, outcome: outcome, error: nil)
                    } catch {
                        return ContenderOutcome(index: index, outcome: nil, error: "\(error)")
                    }
                }
            }
            var all = [ContenderOutcome?](repeating: nil, count: contenders.count)
            while let item = await group.next() {
                all[item.index] = item
            }
            return all
        }
        ticker.cancel()
        try await nio.shutdownGracefully()
        var figures: [PeriodicFigures] = []
        for (i, c) in contenders.enumerated() {
            var f = PeriodicFigures(name: c.name, cpuScope: c.cpuScope)
            var acc = LatenessAccumulator()
            if let outcome = outcomes[i]?.outcome {
                acc.add(buffers[i].samples, missedAbove: .max)
                acc.addSkipped(outcome.skipped)
                f.ticks = config.ticks
                f.raw = Array(buffers[i].samples)
                f.gridMismatches = outcome.gridMismatches
                f.earlyByOwnClock = outcome.earlyByOwnClock
            } else {
                f.error = outcomes[i]?.error ?? "did not finish"
            }
            f.early = acc.early
            f.missed = acc.missed
            f.samples = acc.samples
            f.lateness = acc.summary
            f.cdf = acc.cdf
            f.meanLatenessByTenthNs = Distribution.sliceMeans(f.raw, parts: 10)
            f.finalScheduleErrorNs = f.raw.last
            figures.append(f)
        }
        withExtendedLifetime(engine) {}
        let notes = [
            "contenders ran concurrently (drift is about accumulation, not microseconds); busy-waiting ones left out",
            "\(naiveName): a relative sleep loop (one interval after each wake), the reference for what accumulating "
                + "drift looks like; not a fair contender",
            "\(NIOTimers.repeatedTaskName): EventLoop.scheduleRepeatedTask, fixed delay (each run is scheduled "
                + "one interval after the previous one ran): call k counted against grid tick k, like the naive loop",
        ]
        return PeriodicResult(config: PeriodicConfig(rounds: 1, ticks: config.ticks, warmupTicks: 0,
                                                     intervalNs: config.intervalNs, scenario: name),
                              contenders: figures, notes: notes,
                              adaptiveMarginNs: AdaptiveMargin.current.benchNanoseconds,
                              sleepLeadNs: SleepLead.current.benchNanoseconds)
    }
}
