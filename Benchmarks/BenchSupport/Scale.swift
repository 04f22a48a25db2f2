//===----------------------------------------------------------------------===//
// Scenario `scale`: a dedicated TimerScheduler holding 100,000 live timers far
// in the future. Measures (a) schedule + cancel pairs per second with them
// live, (b) heap bytes per live timer (glibc's in-use bytes around creating them),
// (c) the time to fire 100,000 timers all due at the same instant, and (d)
// re-arms per second: a live timer chosen at random moved to now + 60 s (an idle
// timeout pushed back at a read), in place with OneShotTimer.reschedule(after:),
// with RepeatingTimer.setNextDeadline(_:), and by cancel + a new one-shot.
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
    var timers: Int
    /// Stop the schedule+cancel loop after this many pairs…
    var pairs: Int
    /// …or after this long, whichever comes first.
    var pairBudgetNs: Int64
    /// Lead time of the same-instant batch (doubled if scheduling takes longer).
    var fireLeadNs: Int64 = 50_000_000
}

struct ScaleFigures: Sendable, Encodable {
    var timers: Int
    /// (a) schedule + cancel pairs, and their seconds.
    var scheduleCancel = Rate()
    /// (b) Heap bytes per live timer.
    var bytes = Footprint()
    /// (c) The same-instant batch.
    var batch = Batch()
    /// (d) re-arms and their seconds, per form.
    var rearm = Rate()
    var rearmSetNextDeadline = Rate()
    var rearmCancelSchedule = Rate()

    /// A count of operations over a time.
    struct Rate: Sendable {
        var count = 0
        var seconds: Double = 0
        var perSecond: Double { seconds > 0 ? Double(count) / seconds : 0 }
    }

    /// Heap bytes in use per live timer: over every malloc arena
    /// (malloc_stats), and mallinfo2()'s `uordblks` (main arena only) and
    /// `hblkhd` (mmapped chunks, e.g. the engine's large heap arrays).
    struct Footprint: Sendable {
        var perTimer: Double = 0
        var uordblks: Double = 0
        var hblkhd: Double = 0
    }

    /// The same-instant batch: from the deadline to the last handler (`ms`)
    /// and to the first, the lead it was scheduled with and how long the
    /// scheduling took, and the handler calls counted.
    struct Batch: Sendable {
        var ms: Double = 0
        var firstLatenessNs: Int64 = 0
        var leadNs: Int64 = 0
        var schedulingMs: Double = 0
        var fired = 0
    }

    var scheduleCancelPerSecond: Double { scheduleCancel.perSecond }
    var fireMs: Double { batch.ms }

    enum CodingKeys: String, CodingKey {
        case name, timers, pairs, scheduleCancelPerSecond = "scheduleCancelPerS", bytesPerTimer
        case fireMs = "fire_100k_ms", bytesPerTimerUordblks, bytesPerTimerHblkhd, fireLeadMs
        case firstFireLatenessNs
        case rearmPerSecond = "rearm_per_s", rearmSetNextDeadlinePerSecond = "rearm_set_next_deadline_per_s"
        case rearmCancelSchedulePerSecond = "rearm_cancel_schedule_per_s"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Scale.engineName, forKey: .name)
        try c.encode(timers, forKey: .timers)
        try c.encode(scheduleCancel.count, forKey: .pairs)
        try c.encode(scheduleCancelPerSecond.rounded(), forKey: .scheduleCancelPerSecond)
        try c.encode(bytes.perTimer.rounded(toPlaces: 1), forKey: .bytesPerTimer)
        try c.encode(fireMs.rounded(toPlaces: 3), forKey: .fireMs)
        try c.encode(bytes.uordblks.rounded(toPlaces: 1), forKey: .bytesPerTimerUordblks)
        try c.encode(bytes.hblkhd.rounded(toPlaces: 1), forKey: .bytesPerTimerHblkhd)
        try c.encode(Double(batch.leadNs) / 1e6, forKey: .fireLeadMs)
        try c.encode(batch.firstLatenessNs, forKey: .firstFireLatenessNs)
        try c.encode(rearm.perSecond.rounded(), forKey: .rearmPerSecond)
        try c.encode(rearmSetNextDeadline.perSecond.rounded(), forKey: .rearmSetNextDeadlinePerSecond)
        try c.encode(rearmCancelSchedule.perSecond.rounded(), forKey: .rearmCancelSchedulePerSecond)
    }
}

/// `scale`: one contender, the engine.
struct ScaleResult: Sendable, Encodable {
    var config: ScaleConfig
    var figures: ScaleFigures
    var machineLoad: MachineLoad?

    enum CodingKeys: CodingKey { case name, contenders, machineLoad }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Scale.name, forKey: .name)
        try c.encode([figures], forKey: .contenders)
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
    }
}

/// Counts handler calls of the same-instant batch (engine thread only).
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
        let now = monoNow()
        count += 1
        if count == 1 { first = now }
        if count == target {
            last = now
            done.signal()
        }
    }
}

enum Scale {
    static let name = "scale"
    static let engineName = "TimerScheduler"
    static let farAwayNs: Int64 = 3_600_000_000_000

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
        let scheduler = try TimerScheduler(options: .init(name: "bench-scale"))
        Watchdog.shared.arm("\(name) (\(config.timers) far timers, schedule+cancel)", seconds: 60)
        var figures = try await onDedicatedThread(name: "bench-scale") { try farTimers(scheduler, config) }
        Watchdog.shared.disarm()
        progress("[\(name)] \(Fmt.count(config.timers)) live: \(Fmt.fixed(figures.bytes.perTimer, 1)) B/timer, "
                 + "\(Fmt.rate(figures.scheduleCancelPerSecond)) schedule+cancel")
        progress("[\(name)] re-arm a random live timer to now + 60 s: "
                 + "\(Fmt.rate(figures.rearm.perSecond)) OneShotTimer.reschedule(after:), "
                 + "\(Fmt.rate(figures.rearmSetNextDeadline.perSecond)) RepeatingTimer.setNextDeadline, "
                 + "\(Fmt.rate(figures.rearmCancelSchedule.perSecond)) cancel + schedule")

        Watchdog.shared.arm("\(name) (fire \(config.timers) at one instant)", seconds: 60)
        try await fireBatch(scheduler, config, into: &figures)
        Watchdog.shared.disarm()
        progress("[\(name)] fired \(Fmt.count(figures.batch.fired)) same-instant timers in \(Fmt.fixed(figures.fireMs, 2)) ms")
        withExtendedLifetime(scheduler) {}
        return ScaleResult(config: config, figures: figures)
    }

    /// (a) and (b).
    static func farTimers(_ scheduler: TimerScheduler, _ config: ScaleConfig) throws -> ScaleFigures {
        var figures = ScaleFigures(timers: config.timers)
        let n = config.timers
        var timers: [OneShotTimer] = []
        timers.reserveCapacity(n)
        let base = monoNow() + farAwayNs

        // (b) bytes per live timer. The handler captures nothing.
        let before = (all: allArenasInUse(), mallinfo: mallinfoInUse())
        for i in 0..<n {
            timers.append(scheduler.schedule(at: .init(nanoseconds: base + Int64(i) * 1_000), leeway: .zero) { _ in })
        }
        let after = (all: allArenasInUse(), mallinfo: mallinfoInUse())
        if let a = before.all, let b = after.all {
            figures.bytes.perTimer = Double(Int32(bitPattern: b &- a)) / Double(n)
        } else {
            figures.bytes.perTimer = .nan
        }
        figures.bytes.uordblks = Double(after.mallinfo.uordblks - before.mallinfo.uordblks) / Double(n)
        figures.bytes.hblkhd = Double(after.mallinfo.hblkhd - before.mallinfo.hblkhd) / Double(n)

        // (a) schedule + cancel with the others live; deadlines fall among theirs.
        let t0 = monoNow()
        var pairs = 0
        var elapsed: Int64 = 0
        while pairs < config.pairs {
            for _ in 0..<1_024 {
                let deadline = base + Int64(pairs % n) * 1_000 + 500
                let timer = scheduler.schedule(at: .init(nanoseconds: deadline), leeway: .zero) { _ in }
                timer.cancel()
                pairs += 1
            }
            elapsed = monoNow() - t0
            if elapsed >= config.pairBudgetNs { break }
        }
        figures.scheduleCancel = .init(count: pairs, seconds: Double(elapsed) / 1e9)
        let live = scheduler.statistics.liveTimers
        if live != n {
            progress("[\(name)] note: \(live) live timers after the schedule+cancel loop (expected \(n))")
        }
        rearms(scheduler, config, &timers, into: &figures)
        for t in timers { t.cancel() }
        return figures
    }

    /// (d) Re-arms of a random live timer to now + 60 s, with `timers` live:
    /// in place (one-shots), by `setNextDeadline` (as many repeating timers,
    /// made for it), and by cancel + a new one-shot. Each form runs for the
    /// pairs budget or `config.pairs` re-arms.
    static func rearms(_ scheduler: TimerScheduler, _ config: ScaleConfig, _ timers: inout [OneShotTimer],
                       into figures: inout ScaleFigures) {
        let n = timers.count
        let minute = Duration.seconds(60)
        // The picks, drawn before the clock starts: a fresh random timer per
        // re-arm, as many as a run makes (cycled if the budget allows more).
        let picks = (0..<Swift.min(config.pairs, 1 << 20)).map { _ in Int.random(in: 0..<n) }
        func measure(_ body: (Int) -> Void) -> ScaleFigures.Rate {
            let t0 = monoNow()
            var count = 0
            var elapsed: Int64 = 0
            while count < config.pairs {
                for k in count..<(count + 1_024) { body(picks[k % picks.count]) }
                count += 1_024
                elapsed = monoNow() - t0
                if elapsed >= config.pairBudgetNs { break }
            }
            return .init(count: count, seconds: Double(elapsed) / 1e9)
        }
        figures.rearm = measure { i in timers[i].reschedule(after: minute) }
        figures.rearmCancelSchedule = measure { i in
            timers[i].cancel()
            timers[i] = scheduler.schedule(after: minute, leeway: .zero) { _ in }
        }
        let base = monoNow() + farAwayNs
        let repeating = (0..<n).map { i in
            try! scheduler.repeating(every: .seconds(3_600), startingAt: .init(nanoseconds: base + Int64(i) * 1_000)) { _ in }
        }
        figures.rearmSetNextDeadline = measure { i in
            try! repeating[i].setNextDeadline(PrecisionClock.monotonic.now + minute)
        }
        for t in repeating { t.cancel() }
    }

    /// (c) `timers` one-shots due at the same instant: from that deadline until
    /// the last handler ran.
    static func fireBatch(_ scheduler: TimerScheduler, _ config: ScaleConfig, into figures: inout ScaleFigures)
        async throws
    {
        var lead = config.fireLeadNs
        for attempt in 1...5 {
            let counter = FireCounter(target: config.timers)
            var timers: [OneShotTimer] = []
            timers.reserveCapacity(config.timers)
            let t0 = monoNow()
            let deadline = t0 + lead
            for _ in 0..<config.timers {
                timers.append(scheduler.schedule(at: .init(nanoseconds: deadline), leeway: .zero) { _ in
                    counter.hit()
                })
            }
            let scheduled = monoNow()
            await counter.done.wait()
            figures.batch.schedulingMs = Double(scheduled - t0) / 1e6
            if scheduled >= deadline && attempt < 5 {
                progress("[\(name)] scheduling \(config.timers) timers took \(Fmt.duration(scheduled - t0)), "
                         + "past the \(Fmt.duration(lead)) lead; retrying with a longer lead")
                lead *= 2
                continue
            }
            figures.batch.leadNs = lead
            figures.batch.fired = counter.count
            figures.batch.ms = Double(counter.last - deadline) / 1e6
            figures.batch.firstLatenessNs = counter.first - deadline
            withExtendedLifetime(timers) {}
            return
        }
    }
}

