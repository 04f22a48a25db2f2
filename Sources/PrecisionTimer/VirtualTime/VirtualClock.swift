import CMonoClock
import Synchronization

/// Virtual time for a ``TimerScheduler``: tests drive it and assert exact
/// deadlines without sleeping (in the manner of swift-clocks' `TestClock` and
/// SwiftNIO's `EmbeddedEventLoop`).
///
/// A scheduler made with ``TimerScheduler/init(clock:logger:)`` has no thread: its
/// timers fire on the thread that calls ``advance(by:)-9eb22``, in deadline order, and
/// their ticks carry the virtual instants. The scheduler wakes as the real one
/// would at best: at the earliest latest-acceptable instant (deadline + leeway)
/// among pending timers, firing everything due by then in one wake-up.
///
/// All three sleepable clocks advance together; ``setRealtime(_:)`` moves the
/// wall clock alone, as setting the system time does.
///
/// Advance it from one thread at a time. An inline handler's own advance
/// runs on the advancing thread and is fine; two threads advancing at once
/// (say, a handler delivered on a queue advancing while the test does) share
/// the ticks that fall due, and their calls then come in no defined order.
///
/// One clock can drive several schedulers (say, one for a ``FrameLink`` and one
/// for a ``TaskRegistry``): time moves to the earliest wake-up among them, and
/// each fires what is due on it at that instant, so their timers interleave in
/// time order as they would on real threads.
///
/// It is also a `Clock` whose sleeps are virtual, with a task executor,
/// ``executor``, and async ``advance(by:)-6mxwk``, ``advance(to:)-(VirtualClock.Instant)`` and ``run()`` that
/// let the tasks on it run until they suspend: Clock-generic async code runs on
/// it deterministically (see VirtualClock+Async.swift and *Time in async code*).
public final class VirtualClock: Sendable {
    private let readings: Locked<[Int64]>
    private let engines = Locked<[TimerEngineBox]>([])
    /// The engine of this clock's own sleeps (``sleep(until:tolerance:)``),
    /// made on first use; it reads time through an unowned reference, so the
    /// clock owning it makes no cycle.
    private let sleepEngineSlot = Locked<TimerEngine?>(nil)
    /// The task executor whose jobs the async advances run (see ``executor``).
    public let executor = VirtualTaskExecutor()
    /// See ``sleepsOffExecutor``.
    let offExecutorSleeps = Atomic<Int>(0)

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
    ///
    /// A handler may advance the clock itself: inside its call, the ticks due
    /// with its own that have not run yet run first, before the clock moves,
    /// then those that fall due on the way, in deadline order (a repeating
    /// timer is then called again inside its own call).
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
    /// After each wake-up, and before the first, the jobs those fires made
    /// runnable (on ``executor`` and on virtual schedulers) run until none is
    /// left, while time stands at that instant.
    func advance(toMonotonic target: Int64) {
        runJobs()
        while true {
            let drivers = engines.withLock { $0.compactMap(\.engine) }
            // What is due now first (handlers may have scheduled at "now").
            var fired = false
            for engine in drivers where engine.fireDue() {
                fired = true
            }
            if fired {
                runJobs()
                continue
            }
            guard let wake = drivers.compactMap({ $0.nextWake() }).min(), wake <= target else { break }
            let step = wake.saturatingSubtract(nanoseconds(.monotonic))
            if step > 0 { elapse(step) }
        }
        let remaining = target.saturatingSubtract(nanoseconds(.monotonic))
        guard remaining > 0 else { return }
        elapse(remaining)
        // A sleep that another thread queued during the steps above and that
        // is due by now would wait for the next advance (see `TimerEngine.wait`):
        // the schedulers wake for it at this instant, as a real one would.
        let now = nanoseconds(.monotonic)
        if drivenEngines.contains(where: { ($0.nextWake() ?? .max) <= now }) {
            advance(toMonotonic: target)
        }
    }

    /// The engines this clock drives now.
    var drivenEngines: [TimerEngine] { engines.withLock { $0.compactMap(\.engine) } }

    /// The most jobs one ``runJobs()`` runs before it stops the program: tasks
    /// that never stop making each other runnable (a `Task.yield()` loop) would
    /// otherwise keep virtual time from moving, a hang.
    static let jobLimit = 10_000_000

    /// Runs, on the calling thread, the jobs queued on ``executor`` and on the
    /// virtual schedulers this clock drives, and those they make runnable, until
    /// none is left. Does nothing when called from inside one of those jobs
    /// (a job never runs inside another, which would break an actor's isolation).
    func runJobs() {
        guard !isRunningJobsOnCallingThread else { return }
        var ran = 0
        while true {
            let drivers = drivenEngines
            var any = executor.runQueuedJobs(count: &ran)
            for engine in drivers where engine.runQueuedJobs() {
                any = true
                ran += 1
            }
            guard any else { return }
            guard ran < Self.jobLimit else {  // fatalError: the message is printed in optimised builds too
                fatalError("VirtualClock: \(Self.jobLimit) jobs ran without the tasks suspending on the clock (a task that never stops yielding?)")
            }
        }
    }

    /// The engine of this clock's own sleeps, if a sleep has made it (tests).
    var sleepEngineIfMade: TimerEngine? { sleepEngineSlot.withLock { $0 } }

    /// The engine of this clock's own sleeps.
    var sleepEngine: TimerEngine {
        if let engine = sleepEngineSlot.withLock({ $0 }) { return engine }
        // Attached before any other thread can see it: a sleep queued on an
        // engine that an advance does not drive yet would wait for a later one.
        return sleepEngineSlot.withLock { slot in
            if let engine = slot { return engine }
            let engine = TimerEngine(options: EngineOptions(), clock: UnownedVirtualClock(self))
            attach(engine)
            slot = engine
            return engine
        }
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
    /// A wall-clock tick already collected (called from a handler of the same
    /// wake-up) still runs, stamped with the new wall time, as on a real
    /// scheduler (see *Choosing a clock*). Monotonic and boottime timers are
    /// not affected.
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


/// How a virtual clock's own sleep engine reads time: an unowned reference to
/// the clock that owns it (the clock keeps the engine alive, not the reverse).
final class UnownedVirtualClock: EngineClock {
    unowned let clock: VirtualClock

    init(_ clock: VirtualClock) {
        self.clock = clock
    }

    func nanoseconds(_ source: PrecisionClock.Source) -> Int64 {
        clock.nanoseconds(source)
    }

    var isVirtual: Bool { true }
}

/// A virtual clock is where its schedulers' engines read time.
extension VirtualClock: EngineClock {
    var isVirtual: Bool { true }
}

extension TimerEngine {
    /// The virtual clock driving this engine, if that is where its time comes from.
    var virtualClock: VirtualClock? { clock as? VirtualClock }
}
