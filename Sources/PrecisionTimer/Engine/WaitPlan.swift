import CMonoClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the engine thread waits next: a pure function of what the queues hold
/// and the clocks read (``make(_:)``, table-tested in `WaitPlanTests`), as
/// tokio's `MissedTickBehavior::next_timeout` is for its intervals.
///
/// With leeway to spare, the thread sleeps from the earliest deadline with a
/// timer slack of what it can afford, so the kernel may wake it anywhere up to
/// the earliest latest-acceptable instant and everything due then fires in one
/// wake-up. When the most urgent timer has no leeway to spare, it sleeps to a
/// spin margin before that deadline and spins the rest (or only sleeps, with
/// slack 1 ns, if spinning is off).
struct WaitPlan: Equatable {
    var clock: clockid_t = cmc_clock_monotonic
    var source: PrecisionClock.Source = .monotonic
    /// Sleep (on the doorbell) until this instant of `clock`.
    var sleepUntil: Int64 = .max
    /// Then spin until this instant (`.min`: no spin).
    var spinUntil: Int64 = .min
    /// The thread's timer slack for the sleep.
    var slack: UInt64 = 1
    /// The sleep has no slack, so its oversleep teaches the margin.
    var precise = false
    /// The doorbell's value when the plan was made (set by the caller).
    var doorbellValue: UInt32 = 0

    /// Everything a plan depends on, read at one moment under the engine's lock.
    struct Inputs {
        /// The most urgent pending timer; nil when none is (or only "never" ones).
        var earliest: Earliest?
        /// CLOCK_MONOTONIC now.
        var nowMonotonic: Int64
        /// CLOCK_REALTIME now (read when a wall-clock timer is the most urgent).
        var nowRealtime: Int64
        /// The machine's typical oversleep, kept back from a sleep with slack.
        var learnedMargin: Int64
        /// The spin margin for a wait as long as the earliest timer's.
        var spinMargin: Int64
        /// Added to the learned spin margin: the time the thread's work at the
        /// spin's start takes lately (resuming sleeps early, see
        /// TimerEngine+EarlyResume.swift), so that it does not eat the part of
        /// the margin kept for oversleep.
        var spinStartWork: Int64 = 0
        var allowsSpinning: Bool
        var minimumSpinMargin: Int64
        /// Whether a change of the system time is reported (``WallClockWatcher``).
        var wallClockWatched: Bool
    }

    /// The plan for `inputs`, and the CLOCK_MONOTONIC instant the thread will
    /// wake by (`.max`: only the doorbell wakes it).
    static func make(_ inputs: Inputs) -> (plan: WaitPlan, wakeBy: Int64) {
        var plan = WaitPlan()
        guard let best = inputs.earliest else { return (plan, .max) }
        // Wait on the wall clock when a wall-clock timer is the most urgent, so
        // the kernel honours a change of the system time; otherwise on CLOCK_MONOTONIC.
        if best.source == .realtime {
            plan.clock = cmc_clock_realtime
            plan.source = .realtime
        }
        let base = plan.source == .realtime ? inputs.nowRealtime : inputs.nowMonotonic
        let wakeBy = base.saturatingAdd(best.remainingLatest)
        // Spinning is for timers whose leeway the spin margin can still serve;
        // the rest sleep from the earliest deadline with the slack they afford,
        // keeping back the machine's typical oversleep (the learned margin).
        let spinMargin = Swift.max(inputs.spinMargin.saturatingAdd(Swift.max(0, inputs.spinStartWork)),
                                   inputs.minimumSpinMargin)
        if best.leeway < spinMargin && inputs.allowsSpinning {
            let deadline = wakeBy.saturatingSubtract(best.leeway)
            plan.sleepUntil = deadline.saturatingSubtract(spinMargin)
            plan.spinUntil = deadline
        } else {
            // Slack: the kernel may wake the thread anywhere from the earliest
            // deadline to that plus the slack. Keep back the learned oversleep and
            // half of what remains, so a machine hiccup rarely pushes a fire past
            // its window; the other half still batches every timer due by then.
            plan.sleepUntil = base.saturatingAdd(best.remainingDeadline)
            let affordable = wakeBy.saturatingSubtract(inputs.learnedMargin).saturatingSubtract(plan.sleepUntil)
            plan.slack = UInt64(Swift.max(1, affordable / 2))
        }
        plan.precise = plan.slack == 1
        if best.boottimePending || (best.realtimePending && !inputs.wallClockWatched) {
            // Waits map CLOCK_BOOTTIME onto the clock slept on, which stops during
            // suspend: look again at least once a second so a resume is noticed.
            // The same for wall-clock timers when nothing reports a change of
            // the system time (the watcher could not start).
            let cap = base.saturatingAdd(1_000_000_000)
            if cap < plan.sleepUntil {
                plan.sleepUntil = cap
                plan.spinUntil = .min
                plan.precise = false
            }
        }
        return (plan, inputs.nowMonotonic.saturatingAdd(best.remainingLatest))
    }
}

/// The most urgent pending timer: the earliest latest-acceptable instant
/// (deadline + leeway) among every clock's queue, as time remaining from
/// each clock's reading. Timers whose deadline is "never" (saturated at
/// `Int64.max`) are not pending for this purpose.
struct Earliest {
    /// ns from now until the earliest latest-acceptable instant.
    var remainingLatest: Int64
    /// That timer's leeway and clock.
    var leeway: Int64
    var source: PrecisionClock.Source
    /// ns from now until the earliest deadline (any clock).
    var remainingDeadline: Int64
    var boottimePending: Bool
    var realtimePending: Bool
}

