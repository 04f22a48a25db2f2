//===----------------------------------------------------------------------===//
// Scenario `scale`: a dedicated TimerScheduler holding `timers` live one-shots
// far in the future (1,000,000; --quick 100,000), and the figures a server's
// timeouts need (ScaleFigures.swift). In this order, each step's timers
// released before the next step unless it needs them:
//  (a) heap bytes per live timer (glibc's in-use bytes around making the
//      one-shots, whose handler captures nothing) and the scheduling rate;
//  (b) schedule + cancel pairs per second with them live;
//  (c) re-arms per second of a random live timer to now + 60 s (an idle
//      timeout pushed back at a read): in place with
//      OneShotTimer.reschedule(after:), the same from two threads at once, and
//      by cancel + a new one-shot; and the loop's floor: the same loop, clock
//      read and picks, reading the timer's state under its lock instead
//      (isCancelled), so the memory walk the loop makes anyway shows apart
//      from what the re-arm adds;
//  (d) a zero-leeway 1 kHz RepeatingTimer on the same scheduler, in rounds
//      that alternate an idle run and a run under a paced re-arm load of about
//      1 M/s from another thread (RearmLoad.swift);
//  (e) cancelling every live one-shot through its handle, in the order made,
//      after the same walk reading each one's state (the walk's floor);
//  (f) re-arms by RepeatingTimer.setNextDeadline(_:), with as many repeating
//      timers live;
//  (g) the bytes of (a) for one-shots whose handler captures one reference,
//      on a scheduler of its own, as empty as (a)'s was;
//  (h) same-instant batches (100,000, and 1,000,000 in the full run): from
//      their deadline to the last handler call and to the first, scheduled
//      with a lead chosen from the rate of (a).
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer

#if canImport(Glibc)
import Glibc
#endif
// On Linux, CoreFoundation's headers include <malloc.h>, which the Glibc
// module leaves out: that is where mallinfo2() comes from.
import CoreFoundation

struct ScaleConfig: Sendable {
    /// Live timers while the rates and the precise timer are measured.
    var timers: Int
    /// Stop a rate loop (per thread) after this many operations…
    var pairs: Int
    /// …or after this long, whichever comes first.
    var pairBudgetNs: Int64
    /// Sizes of the same-instant batches.
    var batches: [Int]
    /// A batch's least lead; it gets twice the time its scheduling takes at
    /// the rate measured in (a) when that is longer.
    var fireLeadNs: Int64 = 50_000_000
    /// The precise timer's rounds, each an idle run and a loaded run of
    /// `preciseTicks` ticks.
    var preciseRounds: Int
    var preciseTicks = 500
    /// Ticks of one idle run before the rounds, not counted.
    var preciseWarmupTicks = 100
    /// Re-arms per millisecond of the load.
    var loadBurst = 1_000
}

/// Counts handler calls of a same-instant batch (engine thread only). Only
/// the first and the last call read the clock: a reading in every call
/// would be the bench's own cost, added to each of the batch's handlers.
final class FireCounter: @unchecked Sendable {
    let target: Int
    let done = Latch()
    var count = 0
    var first: Int64 = 0
    var last: Int64 = 0

    init(target: Int) {
        self.target = target
    }

    func hit() {
        count += 1
        if count == 1 { first = monoNow() }
        if count == target {
            last = count == 1 ? first : monoNow()
            done.signal()
        }
    }
}

/// What the handlers of (g) capture.
final class CapturedReference: Sendable {}

enum Scale {
    static let name = "scale"
    static let engineName = "TimerScheduler"
    static let farAwayNs: Int64 = 3_600_000_000_000
    /// The live count the scale targets are stated for.
    static let statedTimers = 1_000_000
    /// Where a re-arm moves a timer: an idle timeout pushed back at a read.
    static let rearmDelay = Duration.seconds(60)
    static let preciseIntervalNs: Int64 = 1_000_000

    /// Heap bytes in use as glibc's mallinfo2() reports them: `uordblks` (in-use
    /// chunks of the *main arena only*) and `hblkhd` (mmapped chunks).
    static func mallinfoInUse() -> (uordblks: Int, hblkhd: Int) {
        let info = mallinfo2()
        return (Int(info.uordblks), Int(info.hblkhd))
    }

    /// Heap bytes in use over *every* arena, mmapped chunks included: the
    /// "Total (incl. mmap): in use bytes" line of glibc's malloc_stats(), which
    /// writes to stderr (captured here through a temporary file). mallinfo2()
    /// alone misses allocations made in a thread's own arena. The figure is
    /// printed with %u: compare deltas modulo 2^32.
    static func allArenasInUse() -> UInt32? {
        guard let file = tmpfile() else { return nil }
        defer { fclose(file) }
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        guard saved >= 0 else { return nil }
        dup2(fileno(file), STDERR_FILENO)
        malloc_stats()
        fflush(nil)
        dup2(saved, STDERR_FILENO)
        close(saved)
        rewind(file)
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            lines.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        guard let total = lines.lastIndex(where: { $0.hasPrefix("Total") }) else { return nil }
        for line in lines[total...] where line.hasPrefix("in use bytes") {
            let digits = line.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            return UInt32(digits) ?? UInt64(digits).map { UInt32(truncatingIfNeeded: $0) }
        }
        return nil
    }

    static func run(_ config: ScaleConfig) async throws -> ScaleResult {
        let n = config.timers
        let scheduler = try TimerScheduler(options: .init(name: "bench-scale"))
        var notes: [String] = []
        var figures = try await liveOneShots(scheduler, config, notes: &notes)

        Watchdog.shared.arm("\(name) (setNextDeadline on \(n) repeating timers)", seconds: 180)
        figures.rearmSetNextDeadline = try await onDedicatedThread(name: "bench-scale") {
            try setNextDeadlineRate(scheduler, config)
        }
        progress("[\(name)] re-arm with \(Fmt.count(n)) live: \(Fmt.rate(figures.rearm.perSecond)) "
                 + "OneShotTimer.reschedule(after:), \(Fmt.rate(figures.rearmTwoThreads.perSecond)) from 2 threads, "
                 + "\(Fmt.rate(figures.rearmEightThreads.perSecond)) from 8, "
                 + "\(Fmt.rate(figures.rearmSetNextDeadline.perSecond)) RepeatingTimer.setNextDeadline, "
                 + "\(Fmt.rate(figures.rearmCancelSchedule.perSecond)) cancel + schedule")

        Watchdog.shared.arm("\(name) (\(n) one-shots capturing a reference)", seconds: 180)
        figures.bytesCapturing = try await onDedicatedThread(name: "bench-scale") { try capturingFootprint(config) }
        progress("[\(name)] \(Fmt.fixed(figures.bytes.perTimer, 1)) B/timer, "
                 + "\(Fmt.fixed(figures.bytesCapturing.perTimer, 1)) B/timer capturing a reference")

        for size in config.batches {
            Watchdog.shared.arm("\(name) (fire \(size) at one instant)", seconds: 120)
            let batch = try await fireBatch(scheduler, size, schedulingRate: figures.schedule.perSecond, config)
            if batch.overran {
                notes.append("fire \(Fmt.count(size)): scheduling took \(Fmt.duration(batch.schedulingNs)), past its "
                             + "\(Fmt.duration(batch.leadNs)) lead even on the retry: not a same-instant batch, "
                             + "its targets not evaluated")
            }
            figures.batches.append(batch)
            progress("[\(name)] fired \(Fmt.count(size)) same-instant timers: first \(Fmt.duration(batch.firstNs)), "
                     + "last \(Fmt.duration(batch.lastNs)) after the deadline")
        }
        Watchdog.shared.arm("\(name) (statistics on and off, batches of \(statisticsBatch))", seconds: 180)
        figures.statisticsCost = try await statisticsCost(schedulingRate: figures.schedule.perSecond, config)
        progress("[\(name)] statistics cost \(Fmt.fixed(figures.statisticsCost.perFireNs, 1)) ns per fire, "
                 + "batches of \(Fmt.count(statisticsBatch)), end to end")
        Watchdog.shared.disarm()
        withExtendedLifetime(scheduler) {}
        return ScaleResult(config: config, figures: figures, notes: notes)
    }

    /// (a) to (e): the live one-shots, from made to cancelled and released.
    static func liveOneShots(_ scheduler: TimerScheduler, _ config: ScaleConfig, notes: inout [String])
        async throws -> ScaleFigures
    {
        let n = config.timers
        Watchdog.shared.arm("\(name) (\(n) far timers: bytes, schedule+cancel, re-arms)", seconds: 240)
        let (measured, timers) = try await onDedicatedThread(name: "bench-scale") { oneShotRates(scheduler, config) }
        var figures = measured
        progress("[\(name)] made \(Fmt.count(n)) one-shots at \(Fmt.rate(figures.schedule.perSecond)); "
                 + "\(Fmt.rate(figures.scheduleCancel.perSecond)) schedule+cancel")

        Watchdog.shared.arm("\(name) (precise 1 kHz timer with \(n) live)", seconds: 120)
        figures.precise = try await precise(scheduler, timers, config)
        let p = figures.precise
        progress("[\(name)] precise 1 kHz timer: p99 \(Fmt.duration(p.idle.summary.p99)) idle, "
                 + "\(Fmt.duration(p.loaded.summary.p99)) under \(Fmt.rate(p.load.perSecond)) re-arms")

        let live = scheduler.statistics.liveTimers
        if live != n {
            notes.append("\(Fmt.count(live)) timers live before cancel-all, not \(Fmt.count(n)): some fired "
                         + "(a re-armed timer is due 60 s after its re-arm)")
        }
        Watchdog.shared.arm("\(name) (cancel \(n) one-shots)", seconds: 120)
        (figures.cancelAllFloorNs, figures.cancelAllNs) = try await onDedicatedThread(name: "bench-scale") {
            var cancelled = 0
            let t0 = monoNow()
            for timer in timers where timer.isCancelled { cancelled += 1 }
            let t1 = monoNow()
            for timer in timers { timer.cancel() }
            let t2 = monoNow()
            precondition(cancelled == 0, "a live timer reads as cancelled")
            return (t1 - t0, t2 - t1)
        }
        progress("[\(name)] cancelled \(Fmt.count(n)) one-shots in \(Fmt.duration(figures.cancelAllNs)) "
                 + "(the same walk reading their state: \(Fmt.duration(figures.cancelAllFloorNs)))")
        return figures
    }

    /// (a), (b) and (c): returns the figures and the live one-shots.
    static func oneShotRates(_ scheduler: TimerScheduler, _ config: ScaleConfig) -> (ScaleFigures, [OneShotTimer]) {
        let n = config.timers
        var figures = ScaleFigures(timers: n)
        let base = monoNow() + farAwayNs
        // (a) The handler captures nothing.
        var (timers, bytes, schedule) = make(n) { i in
            scheduler.schedule(at: .init(nanoseconds: base + Int64(i) * 1_000), leeway: .zero) { _ in }
        }
        figures.bytes = bytes
        figures.schedule = schedule

        // (b) Deadlines fall among the live ones'.
        figures.scheduleCancel = .init(timed(config) { k in
            let deadline = base + Int64(k % n) * 1_000 + 500
            scheduler.schedule(at: .init(nanoseconds: deadline), leeway: .zero) { _ in }.cancel()
        })

        // (c) Random picks, drawn before the clock starts; each of the two
        // threads has its own.
        let picks = draws(n)
        figures.rearm = .init(timed(config) { k in timers[picks[k & (picks.count - 1)]].reschedule(after: rearmDelay) })
        // The same loop with the re-arm's work left out: the clock read, the
        // handle and its timer read under the engine's lock.
        var cancelled = 0
        figures.rearmFloor = .init(timed(config) { k in
            let deadline = PrecisionClock.monotonic.now + rearmDelay
            if timers[picks[k & (picks.count - 1)]].isCancelled && deadline.nanoseconds > 0 { cancelled += 1 }
        })
        precondition(cancelled == 0, "a live timer reads as cancelled")
        let live = timers
        let threads = [draws(n), draws(n)]
        figures.rearmTwoThreads = .init(onThreadsTogether(threads.count, name: "bench-rearm") { t in
            timed(config) { k in live[threads[t][k & (threads[t].count - 1)]].reschedule(after: rearmDelay) }
        })
        // More threads than cores: a lock that hands itself over through the
        // kernel would show here as a collapse.
        let eight = (0..<8).map { _ in draws(n) }
        figures.rearmEightThreads = .init(onThreadsTogether(eight.count, name: "bench-rearm") { t in
            timed(config) { k in live[eight[t][k & (eight[t].count - 1)]].reschedule(after: rearmDelay) }
        })
        // `live` shares the array's storage: make it unique (a copy) before
        // the clock starts.
        timers.withUnsafeMutableBufferPointer { _ in }
        figures.rearmCancelSchedule = .init(timed(config) { k in
            let i = picks[k & (picks.count - 1)]
            timers[i].cancel()
            timers[i] = scheduler.schedule(after: rearmDelay, leeway: .zero) { _ in }
        })
        return (figures, timers)
    }

    /// Random indices into `0 ..< n`, 2^20 of them (a power of two, so a loop
    /// cycles through them with a mask).
    static func draws(_ n: Int) -> [Int] {
        (0..<(1 << 20)).map { _ in Int.random(in: 0..<n) }
    }

    /// Makes `n` one-shots (`make(i)` the i-th, into an array reserved before),
    /// and measures the heap bytes in use around it and the time it took.
    static func make(_ n: Int, _ make: (Int) -> OneShotTimer)
        -> (timers: [OneShotTimer], bytes: ScaleFigures.Footprint, rate: ScaleFigures.Rate)
    {
        var timers: [OneShotTimer] = []
        timers.reserveCapacity(n)
        let before = (all: allArenasInUse(), mallinfo: mallinfoInUse())
        let t0 = monoNow()
        for i in 0..<n { timers.append(make(i)) }
        let t1 = monoNow()
        let after = (all: allArenasInUse(), mallinfo: mallinfoInUse())
        var bytes = ScaleFigures.Footprint()
        if let a = before.all, let b = after.all {
            bytes.perTimer = Double(Int32(bitPattern: b &- a)) / Double(n)
        } else {
            bytes.perTimer = .nan
        }
        bytes.uordblks = Double(after.mallinfo.uordblks - before.mallinfo.uordblks) / Double(n)
        bytes.hblkhd = Double(after.mallinfo.hblkhd - before.mallinfo.hblkhd) / Double(n)
        return (timers, bytes, ScaleFigures.Rate(count: n, seconds: Double(t1 - t0) / 1e9))
    }

    /// Calls `body(k)` for k = 0, 1, 2, … in blocks of 1,024 until
    /// `config.pairs` calls or the budget has passed; returns the calls made and
    /// when the first began and the last ended.
    static func timed(_ config: ScaleConfig, _ body: (Int) -> Void) -> ScaleFigures.Span {
        let t0 = monoNow()
        var count = 0
        var t1 = t0
        while count < config.pairs {
            for k in count..<(count + 1_024) { body(k) }
            count += 1_024
            t1 = monoNow()
            if t1 - t0 >= config.pairBudgetNs { break }
        }
        return .init(count: count, start: t0, end: t1)
    }

    /// (d) The precise timer, as the periodic scenario runs its RepeatingTimer
    /// (Periodic.repeatingTimer), with the periodic table's samples: each
    /// handler call's lateness, read by the bench, against the earliest grid
    /// tick it serves (a call that follows missed ticks counts them as
    /// lateness); missed ticks are also counted apart.
    static func precise(_ scheduler: TimerScheduler, _ timers: [OneShotTimer], _ config: ScaleConfig)
        async throws -> ScaleFigures.Precise
    {
        func run(_ ticks: Int) async throws -> (RoundOutcome, [Int64]) {
            let samples = SampleBuffer(capacity: ticks + 16)
            let outcome = try await Periodic.repeatingTimer(scheduler, ticks, preciseIntervalNs, samples)
            return (outcome, Array(samples.samples))
        }
        var idle = PreciseRuns()
        var loaded = PreciseRuns()
        var load = ScaleFigures.Rate()
        _ = try await run(config.preciseWarmupTicks)
        for _ in 0..<config.preciseRounds {
            idle.add(try await run(config.preciseTicks))
            let rearms = RearmLoad(timers: timers, picks: draws(timers.count), offsets: RearmLoad.randomOffsets(),
                                   burst: config.loadBurst)
            loaded.add(try await run(config.preciseTicks))
            let made = await rearms.stop()
            load.count += made.count
            load.seconds += made.seconds
        }
        return .init(idle: idle.lateness, loaded: loaded.lateness, load: load)
    }

    /// The precise timer's runs of one kind, folded together.
    struct PreciseRuns {
        var accumulator = LatenessAccumulator()
        var missed = 0

        mutating func add(_ round: (outcome: RoundOutcome, samples: [Int64])) {
            for value in round.samples { accumulator.add(value, missedAbove: .max) }
            missed += round.outcome.skipped
        }

        var lateness: ScaleFigures.Precise.Lateness {
            .init(summary: accumulator.summary, calls: accumulator.samples, missed: missed)
        }
    }

    /// (f) With `timers` repeating timers live (an hour apart, the first an
    /// hour away), each re-arm moves a random one's next tick to now + 60 s.
    static func setNextDeadlineRate(_ scheduler: TimerScheduler, _ config: ScaleConfig) throws -> ScaleFigures.Rate {
        let base = monoNow() + farAwayNs
        let repeating = try (0..<config.timers).map { i in
            try scheduler.repeating(every: .seconds(3_600), startingAt: .init(nanoseconds: base + Int64(i) * 1_000)) { _ in }
        }
        let picks = draws(config.timers)
        let rate = ScaleFigures.Rate(timed(config) { k in
            try! repeating[picks[k & (picks.count - 1)]].setNextDeadline(PrecisionClock.monotonic.now + rearmDelay)
        })
        for timer in repeating { timer.cancel() }
        return rate
    }

    /// (g) On a scheduler of its own, made and released here.
    static func capturingFootprint(_ config: ScaleConfig) throws -> ScaleFigures.Footprint {
        let scheduler = try TimerScheduler(options: .init(name: "bench-scale-capture"))
        let captured = CapturedReference()
        let base = monoNow() + farAwayNs
        let made = make(config.timers) { i in
            scheduler.schedule(at: .init(nanoseconds: base + Int64(i) * 1_000), leeway: .zero) { _ in
                blackHole(captured)
            }
        }
        for timer in made.timers { timer.cancel() }
        return made.bytes
    }

    /// (h) `size` one-shots due at the same instant, `lead` after the
    /// scheduling began: twice the time it takes at `schedulingRate`, at least
    /// The batch the statistics' cost is measured on, and its rounds per side.
    static let statisticsBatch = 100_000
    static let statisticsRounds = 7

    /// What recording statistics costs a fire, end to end: a batch of
    /// `statisticsBatch` same-instant one-shots on a fresh scheduler with
    /// statistics on, then on one alike but for `recordsStatistics = false`,
    /// alternating for `statisticsRounds` rounds each.
    static func statisticsCost(schedulingRate: Double, _ config: ScaleConfig) async throws
        -> ScaleFigures.StatisticsCost
    {
        var cost = ScaleFigures.StatisticsCost(timers: statisticsBatch)
        for _ in 0..<statisticsRounds {
            for records in [true, false] {
                var options = TimerScheduler.Options(name: "bench-stats-cost")
                options.recordsStatistics = records
                let scheduler = try TimerScheduler(options: options)
                let batch = try await fireBatch(scheduler, statisticsBatch, schedulingRate: schedulingRate, config)
                if records { cost.onNs.append(batch.lastNs) } else { cost.offNs.append(batch.lastNs) }
            }
        }
        return cost
    }

    /// `config.fireLeadNs`. When the scheduling still ends after the deadline,
    /// one retry with twice the time it took.
    static func fireBatch(_ scheduler: TimerScheduler, _ size: Int, schedulingRate: Double, _ config: ScaleConfig)
        async throws -> ScaleFigures.Batch
    {
        var lead = Swift.max(config.fireLeadNs, Int64(2e9 * Double(size) / Swift.max(schedulingRate, 1)))
        var batch = ScaleFigures.Batch(timers: size)
        for attempt in 1...2 {
            let counter = FireCounter(target: size)
            let (timers, t0, scheduled) = try await onDedicatedThread(name: "bench-scale") { [lead] in
                var timers: [OneShotTimer] = []
                timers.reserveCapacity(size)
                let t0 = monoNow()
                let deadline = PrecisionClock.Instant(nanoseconds: t0 + lead)
                for _ in 0..<size {
                    timers.append(scheduler.schedule(at: deadline, leeway: .zero) { _ in counter.hit() })
                }
                return (timers, t0, monoNow())
            }
            await counter.done.wait()
            let deadline = t0 + lead
            batch = .init(timers: size, lastNs: counter.last - deadline, firstNs: counter.first - deadline,
                          leadNs: lead, schedulingNs: scheduled - t0)
            withExtendedLifetime(timers) {}
            guard batch.overran && attempt == 1 else { break }
            progress("[\(name)] scheduling \(size) timers took \(Fmt.duration(batch.schedulingNs)), past the "
                     + "\(Fmt.duration(lead)) lead; retrying once with twice that")
            lead = 2 * batch.schedulingNs
        }
        return batch
    }
}
