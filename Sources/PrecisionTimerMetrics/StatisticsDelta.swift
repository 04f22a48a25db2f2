// The module's content needs the package trait `Metrics`, which brings in
// swift-metrics: `.package(url: …, from: …, traits: ["Metrics"])`. Without it
// the module is empty, and a package that uses only PrecisionTimer never
// resolves swift-metrics.
#if Metrics
import PrecisionTimer

/// What a scheduler recorded between two copies of its `TimerStatistics`:
/// the figures an export adds to its counters and timers.
///
/// A pure function of the two copies, with no state and no lock, so that its
/// arithmetic is tested on its own. The counts and histograms of
/// `TimerStatistics` only grow between resets, so the difference of two
/// copies is what was recorded in between. After a
/// `TimerScheduler.resetStatistics()` the later copy holds only what came
/// after the reset: then the delta is that copy whole (what was recorded
/// between the earlier copy and the reset is not seen by anyone).
struct StatisticsDelta {
    /// One clock's share.
    struct ClockDelta {
        /// Handler calls of timers on the clock.
        var fires = 0
        /// Ticks that fell due but did not fire on their own.
        var missedTicks = 0
        /// The lateness of each scheduled fire.
        var lateness = LatencyHistogram()
    }

    /// The clocks a timer can use, in the order of their raw values.
    static let clocks: [PrecisionClock.Source] = [.monotonic, .boottime, .realtime]

    /// Per clock of `clocks`, in that order.
    var clocks: [ClockDelta]
    /// The run time of each inline handler call.
    var handlerTime: LatencyHistogram
    /// The run time of each job.
    var jobTime: LatencyHistogram
    /// Wake-ups of the scheduler's thread.
    var wakeups: Int
    /// Jobs run.
    var jobs: Int
    /// Nanoseconds spent spinning.
    var spinNanoseconds: Int64
    /// Times the system time was set (a count a reset does not touch).
    var wallClockChanges: Int
    /// Whether the statistics were reset between the two copies (the delta is
    /// then the later copy whole).
    var sawReset: Bool

    /// What was recorded from `earlier` (nil: from the scheduler's making or
    /// last reset) to `later`, a copy taken after it of the same scheduler's
    /// statistics.
    ///
    /// A reset in between is seen by the scheduler's count of resets (and,
    /// for copies made by hand in tests, when `later` starts at another
    /// instant, `TimerStatistics.since`, or holds less of any figure than
    /// `earlier`).
    init(from earlier: TimerStatistics?, to later: TimerStatistics) {
        let base = earlier.flatMap { Self.isContinuation(of: $0, by: later) ? $0 : nil }
        sawReset = earlier != nil && base == nil
        clocks = Self.clocks.map { source in
            let now = later.clock(source)
            guard let before = base?.clock(source) else {
                return ClockDelta(fires: now.fires, missedTicks: now.missedTicks, lateness: now.lateness)
            }
            return ClockDelta(fires: now.fires - before.fires, missedTicks: now.missedTicks - before.missedTicks,
                              lateness: now.lateness.subtracting(before.lateness))
        }
        handlerTime = base.map { later.handlerTime.subtracting($0.handlerTime) } ?? later.handlerTime
        jobTime = base.map { later.jobTime.subtracting($0.jobTime) } ?? later.jobTime
        wakeups = later.wakeups - (base?.wakeups ?? 0)
        jobs = later.jobs - (base?.jobs ?? 0)
        spinNanoseconds = Self.nanoseconds(later.spinTime) - Self.nanoseconds(base?.spinTime ?? .zero)
        // Kept across resets, so always a difference.
        wallClockChanges = Swift.max(0, later.wallClockChanges - (earlier?.wallClockChanges ?? 0))
    }

    /// Whether `later` continues `earlier`: no reset in between, the same
    /// start, and no figure less.
    static func isContinuation(of earlier: TimerStatistics, by later: TimerStatistics) -> Bool {
        guard later.resets == earlier.resets, later.since == earlier.since,
              later.wakeups >= earlier.wakeups, later.jobs >= earlier.jobs,
              later.spinTime >= earlier.spinTime,
              later.handlerTime.count >= earlier.handlerTime.count,
              later.jobTime.count >= earlier.jobTime.count
        else { return false }
        return clocks.allSatisfy { source in
            let (a, b) = (earlier.clock(source), later.clock(source))
            return b.fires >= a.fires && b.missedTicks >= a.missedTicks && b.lateness.count >= a.lateness.count
        }
    }

    /// `duration` in whole nanoseconds, saturating at the ends of `Int64`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }
}
#endif
