import Synchronization

/// Virtual time for a ``TimerScheduler``: tests drive it and assert exact
/// deadlines without sleeping (in the manner of swift-clocks' `TestClock` and
/// SwiftNIO's `EmbeddedEventLoop`).
///
/// A scheduler made with ``TimerScheduler/init(clock:)`` has no thread: its
/// timers fire on the thread that calls ``advance(by:)``, in deadline order, and
/// their ticks carry the virtual instants. The scheduler wakes as the real one
/// would at best: at the earliest latest-acceptable instant (deadline + leeway)
/// among pending timers, firing everything due by then in one wake-up.
///
/// All three sleepable clocks advance together; ``setRealtime(_:)`` moves the
/// wall clock alone, as setting the system time does.
///
/// One clock can drive several schedulers (say, one for a ``FrameLink`` and one
/// for a ``TaskRegistry``): time moves to the earliest wake-up among them, and
/// each fires what is due on it at that instant, so their timers interleave in
/// time order as they would on real threads.
public final class VirtualClock: Sendable {
    private let readings: Locked<[Int64]>
    private let engines = Locked<[TimerEngineBox]>([])

    /// A virtual clock whose monotonic, boottime and realtime readings start at
    /// the given nanoseconds.
    public init(monotonic: Int64 = 1_000_000_000, boottime: Int64 = 1_000_000_000,
                realtime: Int64 = 1_700_000_000_000_000_000) {
        readings = Locked([monotonic, boottime, realtime, monotonic])
    }

    /// The current virtual reading of `source` (`monotonicRaw` follows `monotonic`).
    public func now(_ source: PrecisionClock.Source = .monotonic) -> PrecisionClock.Instant {
        .init(nanoseconds: nanoseconds(source))
    }

    func nanoseconds(_ source: PrecisionClock.Source) -> Int64 {
        readings.withLock { $0[source.rawValue] }
    }

    /// Moves time forward by `duration`, firing every timer that falls due on the
    /// calling thread, in order. A negative duration is a no-op; one past the
    /// `Int64` nanosecond range saturates (time stops at ``PrecisionClock/Instant/max``).
    /// Every tick due on the way fires: a repeating timer advanced by years runs
    /// its handler for each of its ticks.
    public func advance(by duration: Duration) {
        let ns = duration.saturatingNanoseconds
        let target = nanoseconds(.monotonic).saturatingAdd(Swift.max(0, ns))
        advance(toMonotonic: target)
    }

    /// Moves time forward until the monotonic reading is `instant` (no-op if it
    /// is already past), firing what falls due.
    public func advance(to instant: PrecisionClock.Instant) {
        advance(toMonotonic: instant.nanoseconds)
    }

    /// Fires every timer due up to `target` (a monotonic reading), waking each
    /// scheduler as the real one would: at the earliest latest-acceptable instant
    /// among its pending timers, where everything already due fires together.
    private func advance(toMonotonic target: Int64) {
        while true {
            let drivers = engines.withLock { $0.compactMap(\.engine) }
            // What is due now first (handlers may have scheduled at "now").
            var fired = false
            for engine in drivers where engine.fireDue() {
                fired = true
            }
            if fired { continue }
            guard let wake = drivers.compactMap({ $0.nextWake() }).min(), wake <= target else { break }
            let step = wake.saturatingSubtract(nanoseconds(.monotonic))
            if step > 0 { elapse(step) }
        }
        let remaining = target.saturatingSubtract(nanoseconds(.monotonic))
        if remaining > 0 { elapse(remaining) }
    }

    /// Moves time forward by `duration` without firing anything: what a handler
    /// calls to model work that keeps the scheduler busy (a handler that blocks
    /// for 2.5 intervals). A negative duration is a no-op.
    public func busy(for duration: Duration) {
        elapse(Swift.max(0, duration.saturatingNanoseconds))
    }

    /// Sets the wall clock (CLOCK_REALTIME) alone, as `clock_settime` would, and
    /// tells the scheduler, as the kernel tells a real one: wall-clock timers now
    /// due fire at once on the calling thread (their ticks carry the new wall
    /// time); those now further away wait until the wall clock reaches them.
    /// Monotonic and boottime timers are not affected.
    public func setRealtime(_ instant: PrecisionClock.Instant) {
        readings.withLock { $0[PrecisionClock.Source.realtime.rawValue] = instant.nanoseconds }
        for engine in engines.withLock({ $0.compactMap(\.engine) }) {
            engine.wallClockChanged()
        }
        advance(toMonotonic: nanoseconds(.monotonic))
    }

    func elapse(_ ns: Int64) {
        readings.withLock { r in
            for i in r.indices { r[i] = r[i].saturatingAdd(ns) }
        }
    }

    func attach(_ engine: TimerEngine) {
        engines.withLock { boxes in
            boxes.removeAll { $0.engine == nil }
            boxes.append(TimerEngineBox(engine: engine))
        }
    }
}

/// A weak reference to an engine a virtual clock drives (the engine holds the
/// clock strongly).
struct TimerEngineBox: Sendable {
    weak var engine: TimerEngine?
}
