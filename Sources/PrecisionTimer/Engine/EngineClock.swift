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
    /// Whether time moves only when a test advances it (``VirtualClock``). The
    /// engine then has no thread and fires only inside an advance, and the
    /// system time cannot be set under it (no ``WallClockWatcher``).
    var isVirtual: Bool { get }
}

/// The kernel's clocks, read through the vDSO.
final class KernelClock: EngineClock {
    static let shared = KernelClock()

    @inline(__always)
    func nanoseconds(_ source: PrecisionClock.Source) -> Int64 {
        cmc_now_ns(source.clockID)
    }

    var isVirtual: Bool { false }
}

