//===----------------------------------------------------------------------===//
// What the `scale` scenario measures (Scale.swift), and its JSON object: one
// contender, the engine, whose figures' keys (ScaleFigures.Key) are read by
// other code and by the targets (Targets.swift). A same-instant batch's keys
// carry its size: `fire_100k_ms` for 100,000 timers, `fire_1m_ms` for
// 1,000,000.
//===----------------------------------------------------------------------===//

/// `scale`: one contender, the engine.
struct ScaleResult: Sendable, Encodable {
    var config: ScaleConfig
    var figures: ScaleFigures
    /// What went differently from the plan (printed under the table).
    var notes: [String] = []
    var machineLoad: MachineLoad?

    enum CodingKeys: CodingKey { case name, contenders, notes, machineLoad }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Scale.name, forKey: .name)
        try c.encode([figures], forKey: .contenders)
        if !notes.isEmpty { try c.encode(notes, forKey: .notes) }
        try c.encodeIfPresent(machineLoad, forKey: .machineLoad)
    }
}

struct ScaleFigures: Sendable, Encodable {
    /// Live timers the scheduler holds while the rates and the precise timer
    /// are measured.
    var timers: Int
    /// Making the `timers` far one-shots (the scheduling rate a batch's lead is
    /// chosen from).
    var schedule = Rate()
    /// Schedule + cancel pairs with the others live.
    var scheduleCancel = Rate()
    /// Heap bytes per live one-shot whose handler captures nothing.
    var bytes = Footprint()
    /// The same for one-shots whose handler captures one reference (made
    /// before, so not counted).
    var bytesCapturing = Footprint()
    /// Re-arms of a random live timer to now + 60 s, per form.
    var rearm = Rate()
    /// The re-arm loop reading the picked timer's state instead: its floor.
    var rearmFloor = Rate()
    var rearmTwoThreads = Rate()
    /// The same from 8 threads: more threads than this machine has cores.
    var rearmEightThreads = Rate()
    var rearmSetNextDeadline = Rate()
    var rearmCancelSchedule = Rate()
    /// Cancelling every live one-shot through its handle, in the order made.
    var cancelAllNs: Int64 = 0
    /// The same walk reading each timer's state instead: its floor.
    var cancelAllFloorNs: Int64 = 0
    /// Same-instant batches, smallest first.
    var batches: [Batch] = []
    /// A zero-leeway 1 kHz repeating timer on the scheduler holding the live
    /// timers, idle and under a paced re-arm load.
    var precise = Precise()
    /// What statistics cost a fire end to end: a same-instant batch on fresh
    /// schedulers alike but for `recordsStatistics`, rounds alternating.
    var statisticsCost = StatisticsCost()

    /// The batch's time, deadline → last handler, per round, with statistics
    /// on and off; the cost per fire is the difference of the medians.
    struct StatisticsCost: Sendable {
        var timers = 0
        var onNs: [Int64] = []
        var offNs: [Int64] = []

        static func median(_ values: [Int64]) -> Int64 { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        var perFireNs: Double {
            timers > 0 ? Double(Self.median(onNs) - Self.median(offNs)) / Double(timers) : 0
        }
    }

    /// A count of operations over a time.
    struct Rate: Sendable {
        var count = 0
        var seconds: Double = 0
        var perSecond: Double { seconds > 0 ? Double(count) / seconds : 0 }

        init(count: Int = 0, seconds: Double = 0) {
            self.count = count
            self.seconds = seconds
        }

        /// The operations of one loop over the time it ran.
        init(_ span: Span) {
            self.init(count: span.count, seconds: Double(span.end - span.start) / 1e9)
        }

        /// The operations of loops that ran at once, over the time from the
        /// first start to the last end.
        init(_ spans: [Span]) {
            let start = spans.map(\.start).min() ?? 0
            let end = spans.map(\.end).max() ?? 0
            self.init(count: spans.reduce(0) { $0 + $1.count }, seconds: Double(end - start) / 1e9)
        }
    }

    /// A loop's operations and when it began and ended (CLOCK_MONOTONIC ns).
    struct Span: Sendable {
        var count: Int
        var start: Int64
        var end: Int64
    }

    /// Heap bytes in use per live timer: over every malloc arena
    /// (malloc_stats), and mallinfo2()'s `uordblks` (main arena only) and
    /// `hblkhd` (mmapped chunks, e.g. the engine's large heap arrays).
    struct Footprint: Sendable {
        var perTimer: Double = 0
        var uordblks: Double = 0
        var hblkhd: Double = 0
    }

    /// `timers` one-shots due at one instant: from the deadline to the last
    /// handler call and to the first, the lead they were scheduled with and how
    /// long the scheduling took.
    struct Batch: Sendable {
        var timers: Int
        var lastNs: Int64 = 0
        var firstNs: Int64 = 0
        var leadNs: Int64 = 0
        var schedulingNs: Int64 = 0
        /// The scheduling ended after the deadline, so some handlers ran before
        /// the last timer was made: the figures do not measure a batch.
        var overran: Bool { schedulingNs >= leadNs }
    }

    /// The precise timer's lateness (per handler call, read by the bench,
    /// against the earliest tick it serves) and missed ticks, without and with the re-arm load, and the rate
    /// the load achieved.
    struct Precise: Sendable {
        var idle = Lateness()
        var loaded = Lateness()
        var load = Rate()

        struct Lateness: Sendable {
            var summary = LatencySummary()
            var calls = 0
            var missed = 0
        }
    }

    func batch(_ timers: Int) -> Batch? { batches.first { $0.timers == timers } }

    /// The JSON keys: contracts other code reads.
    enum Key {
        static let scheduleCancel = "schedule_cancel_per_s"
        static let bytes = "bytes_per_timer"
        static let bytesCapturing = "bytes_per_timer_capturing"
        static let rearm = "rearm_per_s"
        static let rearmFloor = "rearm_floor_per_s"
        static let rearmTwoThreads = "rearm_2threads_per_s"
        static let rearmEightThreads = "rearm_8threads_per_s"
        static let rearmSetNextDeadline = "rearm_set_next_deadline_per_s"
        static let rearmCancelSchedule = "rearm_cancel_schedule_per_s"
        static let cancelAll = "cancel_all_ms"
        static let cancelAllFloor = "cancel_all_floor_ms"
        static let preciseP50 = "precise_p50_ns"
        static let preciseP99 = "precise_p99_ns"
        static let preciseIdleP50 = "precise_idle_p50_ns"
        static let preciseIdleP99 = "precise_idle_p99_ns"
        static let preciseLoad = "precise_load_rearm_per_s"
        static let statisticsPerFire = "statistics_ns_per_fire"

        /// `100k` for 100,000, `1m` for 1,000,000; other sizes in full.
        static func size(_ timers: Int) -> String {
            if timers >= 1_000_000 && timers % 1_000_000 == 0 { return "\(timers / 1_000_000)m" }
            if timers >= 1_000 && timers % 1_000 == 0 { return "\(timers / 1_000)k" }
            return "\(timers)"
        }

        /// A batch of `timers`: deadline → last handler call.
        static func fire(_ timers: Int) -> String { "fire_\(size(timers))_ms" }
        /// Deadline → first handler call.
        static func fireFirst(_ timers: Int) -> String { "fire_\(size(timers))_first_ms" }
        static func fireLead(_ timers: Int) -> String { "fire_\(size(timers))_lead_ms" }
        static func fireScheduling(_ timers: Int) -> String { "fire_\(size(timers))_scheduling_ms" }
    }

    /// A JSON key made at run time (the batches' keys carry their size).
    struct CodingName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingName.self)
        func put(_ key: String, _ value: some Encodable) throws { try c.encode(value, forKey: CodingName(key)) }
        func ms(_ ns: Int64) -> Double { (Double(ns) / 1e6).rounded(toPlaces: 3) }
        try put("name", Scale.engineName)
        try put("timers", timers)
        try put("schedule_per_s", schedule.perSecond.rounded())
        try put("pairs", scheduleCancel.count)
        try put(Key.scheduleCancel, scheduleCancel.perSecond.rounded())
        try put(Key.bytes, bytes.perTimer.rounded(toPlaces: 1))
        try put("bytes_per_timer_uordblks", bytes.uordblks.rounded(toPlaces: 1))
        try put("bytes_per_timer_hblkhd", bytes.hblkhd.rounded(toPlaces: 1))
        try put(Key.bytesCapturing, bytesCapturing.perTimer.rounded(toPlaces: 1))
        try put(Key.rearm, rearm.perSecond.rounded())
        try put(Key.rearmFloor, rearmFloor.perSecond.rounded())
        try put(Key.rearmTwoThreads, rearmTwoThreads.perSecond.rounded())
        try put(Key.rearmEightThreads, rearmEightThreads.perSecond.rounded())
        try put(Key.rearmSetNextDeadline, rearmSetNextDeadline.perSecond.rounded())
        try put(Key.rearmCancelSchedule, rearmCancelSchedule.perSecond.rounded())
        try put(Key.cancelAll, ms(cancelAllNs))
        try put(Key.cancelAllFloor, ms(cancelAllFloorNs))
        for b in batches {
            try put(Key.fire(b.timers), ms(b.lastNs))
            try put(Key.fireFirst(b.timers), ms(b.firstNs))
            try put(Key.fireLead(b.timers), ms(b.leadNs))
            try put(Key.fireScheduling(b.timers), ms(b.schedulingNs))
        }
        try put(Key.preciseP50, precise.loaded.summary.p50)
        try put(Key.preciseP99, precise.loaded.summary.p99)
        try put("precise_max_ns", precise.loaded.summary.max)
        try put("precise_calls", precise.loaded.calls)
        try put("precise_missed", precise.loaded.missed)
        try put(Key.preciseIdleP50, precise.idle.summary.p50)
        try put(Key.preciseIdleP99, precise.idle.summary.p99)
        try put("precise_idle_max_ns", precise.idle.summary.max)
        try put("precise_idle_calls", precise.idle.calls)
        try put("precise_idle_missed", precise.idle.missed)
        try put(Key.preciseLoad, precise.load.perSecond.rounded())
        try put(Key.statisticsPerFire, statisticsCost.perFireNs.rounded(toPlaces: 1))
        try put("statistics_batch", statisticsCost.timers)
        try put("statistics_on_ms", statisticsCost.onNs.map { ms($0) })
        try put("statistics_off_ms", statisticsCost.offNs.map { ms($0) })
    }
}
