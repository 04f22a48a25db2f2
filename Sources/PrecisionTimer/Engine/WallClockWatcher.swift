import CMonoClock
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells schedulers with wall-clock timers that the system time was set.
///
/// A scheduler whose most urgent timer is on ``PrecisionClock/Source/realtime``
/// sleeps on CLOCK_REALTIME, and the kernel moves that sleep when the time is
/// set. A realtime timer behind a more urgent monotonic one would only be looked
/// at again when the monotonic one fires; this watcher closes that gap. One
/// thread per process, started by the first real scheduler that queues a
/// realtime timer, blocks on a timerfd armed with `TFD_TIMER_CANCEL_ON_SET` and,
/// when the time is set, rings the doorbell of every scheduler registered here:
/// each re-plans against the new wall time, fires what is now due, and sleeps
/// toward what is not.
///
/// Where the notifier cannot be opened, ``isActive`` stays false and schedulers
/// look at their realtime timers at least once a second instead.
final class WallClockWatcher: Sendable {
    static let shared = WallClockWatcher()

    private struct State {
        var engines: [TimerEngineBox] = []
        var started = false
    }

    private let state = Locked(State())
    private let active = Atomic<Bool>(false)

    /// Whether the notifier thread is running (false before the first realtime
    /// timer, or where the kernel refused the timerfd).
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Registers `engine` (weakly) and starts the thread on first use.
    func watch(_ engine: TimerEngine) {
        let start = state.withLock { s -> Bool in
            s.engines.removeAll { $0.engine == nil }
            if !s.engines.contains(where: { $0.engine === engine }) {
                s.engines.append(TimerEngineBox(engine: engine))
            }
            defer { s.started = true }
            return !s.started
        }
        guard start else { return }
        let fd = cmc_clock_change_open()
        guard fd >= 0 else { return }
        active.store(true, ordering: .releasing)
        let rc = startDetachedThread {
            _ = cmc_thread_set_name("PT-wallclock")
            self.run(fd: fd)
        }
        if rc != 0 {
            cmc_clock_change_close(fd)
            active.store(false, ordering: .releasing)
        }
    }

    /// The registered schedulers still alive.
    private var engines: [TimerEngine] {
        state.withLock { s in s.engines.compactMap(\.engine) }
    }

    private func run(fd: Int32) {
        while true {
            let rc = cmc_clock_change_wait(fd, -1)
            if rc == 0 {
                for engine in engines { engine.wallClockChanged() }
            } else if rc != EINTR && rc != EAGAIN {
                // The notifier broke: schedulers fall back to looking once a second.
                active.store(false, ordering: .releasing)
                cmc_clock_change_close(fd)
                for engine in engines { engine.doorbell.ring() }
                return
            }
        }
    }
}

/// A weak reference to an engine (a ``VirtualClock`` or the watcher lists the
/// engines it drives; each engine holds its clock strongly).
struct TimerEngineBox: Sendable {
    weak var engine: TimerEngine?
}
