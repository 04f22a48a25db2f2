/// What a scheduler recorded: how late its timers fired, per clock; how long
/// its inline handlers and Swift concurrency jobs ran (each delays every other
/// timer on its thread); and its counts. ``TimerScheduler/statistics`` takes a
/// copy; ``TimerScheduler/resetStatistics()`` starts them again.
///
/// - **Lateness** is the time from a fire's deadline to the start of its
///   handler call (``Tick/lateness``), recorded for every scheduled fire of a
///   timer on that clock, inline or on a queue, async sleeps on the scheduler
///   included. A sleep whose task runs on the scheduler's thread is resumed
///   when the spin before its deadline starts, and its code runs after the
///   spin: its lateness runs from the deadline to the spin's end, and is
///   recorded once the thread has run what was due there (its fire is
///   counted at once). A
///   ``ScheduledTimer/fire()`` made by hand is counted in
///   ``fires`` but has no deadline, so no lateness. A timer of an `owner:`
///   form whose owner is gone ends without a call: nothing is recorded for it.
/// - **Handler time** is the run time of each inline handler call, on the
///   scheduler's thread (a handler delivered on a queue runs elsewhere), to
///   the start of the next call when several are due at once (the engine's
///   step between them included); **job time** that of each job the
///   scheduler ran as an executor.
/// - The histograms are ``LatencyHistogram``s: 0 to about 68.7 s, within 0.8 %.
///
/// Recording is on by default (``TimerScheduler/Options/recordsStatistics``).
/// It costs a few nanoseconds per fire under the lock the fire takes anyway
/// (`bench clock-read` measures it as `TimerStatistics.record`). An inline
/// call's run time ends at the next clock reading the scheduler's thread
/// takes (the next call's start, or the reading its next look at the queues
/// uses), so fires read the clock no more often than with recording off; a
/// job is timed with a clock read after it.
public struct TimerStatistics: Sendable {
    /// One clock's fires.
    public struct ClockFigures: Sendable, Hashable {
        /// Handler calls of timers on this clock, made by hand included.
        public var fires = 0
        /// Ticks that fell due but did not fire on their own (``Tick/missed``).
        public var missedTicks = 0
        /// How late each scheduled fire's handler call began.
        public var lateness = LatencyHistogram()
    }

    /// When the figures began: the scheduler's making or the last reset, on
    /// the monotonic clock.
    public internal(set) var since: PrecisionClock.Instant
    /// Per sleepable clock (indexed by `PrecisionClock.Source.rawValue`).
    var clocks = [ClockFigures](repeating: ClockFigures(), count: TimerEngine.sleepableSources)
    /// The run time of each inline handler call.
    public internal(set) var handlerTime = LatencyHistogram()
    /// The run time of each Swift concurrency job run on the scheduler's thread.
    public internal(set) var jobTime = LatencyHistogram()
    /// Times the scheduler's thread returned from a wait (its wake-ups).
    public internal(set) var wakeups = 0
    /// Swift concurrency jobs run on the scheduler's thread.
    public internal(set) var jobs = 0
    /// Time the scheduler's thread spent spinning before zero-leeway deadlines:
    /// CPU time, since a spinning thread runs all along.
    public internal(set) var spinTime = Duration.zero
    /// Timers scheduled or suspended now, a one-shot included until its handler
    /// call begins (a gauge: a reset does not touch it).
    public internal(set) var liveTimers = 0
    /// Times the system time was reported set while this scheduler had
    /// wall-clock timers (each made it re-plan against the new time).
    public internal(set) var wallClockChanges = 0
    /// Resets made before these figures began: two copies with the same count
    /// hold figures of the same period, even when a reset came at the very
    /// instant the earlier one began (as under a virtual clock).
    package internal(set) var resets: UInt64 = 0

    init(since: Int64) {
        self.since = .init(nanoseconds: since)
    }

    /// The figures of timers on `source` (all zero for `monotonicRaw`, which
    /// no timer can use).
    public func clock(_ source: PrecisionClock.Source) -> ClockFigures {
        source.rawValue < clocks.count ? clocks[source.rawValue] : ClockFigures()
    }

    /// Handler calls made, on every clock.
    public var fires: Int { clocks.reduce(0) { $0 + $1.fires } }
    /// Missed ticks, on every clock.
    public var missedTicks: Int { clocks.reduce(0) { $0 + $1.missedTicks } }
    /// Lateness on every clock together.
    public var lateness: LatencyHistogram {
        clocks.reduce(into: LatencyHistogram()) { $0.merge($1.lateness) }
    }

    /// Records one handler call: a scheduled fire with its lateness (nil for
    /// one made by hand) and the ticks it missed, and the handler's run time
    /// (nil when it ran on a queue). What the engine adds per fire, under the
    /// lock it holds anyway.
    @inline(__always)
    package mutating func record(fireOn source: Int, latenessNanoseconds: Int64?, missed: Int,
                                 handlerNanoseconds: Int64?) {
        clocks[source].fires &+= 1
        clocks[source].missedTicks &+= missed
        if let latenessNanoseconds { clocks[source].lateness.record(nanoseconds: latenessNanoseconds) }
        if let handlerNanoseconds { handlerTime.record(nanoseconds: handlerNanoseconds) }
    }

    /// Records the lateness of a fire counted before (a sleep resumed ahead
    /// of its deadline, whose lateness is known once the spin has reached it).
    package mutating func record(latenessNanoseconds: Int64, on source: Int) {
        clocks[source].lateness.record(nanoseconds: latenessNanoseconds)
    }

    /// Empties the figures, keeping the gauge, from `now` on.
    mutating func reset(now: Int64) {
        for i in clocks.indices {
            clocks[i].fires = 0
            clocks[i].missedTicks = 0
            clocks[i].lateness.reset()
        }
        handlerTime.reset()
        jobTime.reset()
        since = .init(nanoseconds: now)
    }
}
