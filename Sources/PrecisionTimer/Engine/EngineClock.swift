import CMonoClock

/// Where an engine reads "now": the one seam between the engine and time.
///
/// Two implementations: ``KernelClock`` (the kernel's clocks; the engine then
/// has its own thread, which waits on a futex doorbell) and ``VirtualClock``
/// (test time; the engine has no thread and fires what is due when the test
/// advances the clock). The engine's code is the same for both: it reads time
/// here, and decides when to wake with ``TimerEngine/earliestLocked(_:now:)``.
protocol EngineClock: AnyObject, Sendable {
    /// The current reading of `source`, in nanoseconds.
    func nanoseconds(_ source: PrecisionClock.Source) -> Int64
    /// Whether the system time can be set under this clock (so an engine with
    /// wall-clock timers registers with the ``WallClockWatcher``).
    var followsSystemTime: Bool { get }
}

/// The kernel's clocks, read through the vDSO.
final class KernelClock: EngineClock {
    static let shared = KernelClock()

    @inline(__always)
    func nanoseconds(_ source: PrecisionClock.Source) -> Int64 {
        cmc_now_ns(source.clockID)
    }

    var followsSystemTime: Bool { true }
}

