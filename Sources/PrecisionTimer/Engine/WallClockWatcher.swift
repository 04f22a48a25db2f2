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
        guard start, case .success(let fd) = Self.openNotifier() else { return }
        active.store(true, ordering: .releasing)
        let rc = startDetachedThread {
            _ = system_thread_set_name("PT-wallclock")
            self.run(fd: fd)
        }
        if rc != 0 {
            _ = system_clock_change_close(fd)
            active.store(false, ordering: .releasing)
        }
    }

    /// The registered schedulers still alive.
    private var engines: [TimerEngine] {
        state.withLock { s in s.engines.compactMap(\.engine) }
    }

    private func run(fd: Int32) {
        while true {
            switch Self.wait(fd, timeoutMilliseconds: -1) {
            case .clockSet:
                for engine in engines { engine.wallClockChanged() }
            case .nothing, .timedOut:
                continue
            case .failed:
                // The notifier broke: schedulers fall back to looking once a second.
                active.store(false, ordering: .releasing)
                _ = system_clock_change_close(fd)
                for engine in engines { engine.doorbell.ring() }
                return
            }
        }
    }

    // MARK: - The notifier

    /// Opens the notifier: a timerfd on CLOCK_REALTIME armed far in the future
    /// with `TFD_TIMER_CANCEL_ON_SET`, so that it never expires and setting the
    /// clock cancels it.
    /// - Returns: the file descriptor, or the error of creating or arming it
    ///   (a descriptor that cannot be armed is closed).
    static func openNotifier() -> Result<Int32, PrecisionTimerError.Errno> {
        system_clock_change_create().flatMap { fd in
            system_clock_change_arm(fd).map { fd }.mapError { errno in
                _ = system_clock_change_close(fd)
                return errno
            }
        }
    }

    /// What one wait on the notifier saw.
    enum Notice: Equatable {
        /// The wall clock was set; the notifier is armed again for the next time.
        case clockSet
        /// The timeout ran out.
        case timedOut
        /// Nothing to report: a signal, a wake-up with nothing to read, or an
        /// expiry (which cannot happen, armed this far out).
        case nothing
        /// The notifier failed with this error number (re-arming included).
        case failed(PrecisionTimerError.Errno)
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) for the wall clock to be
    /// set. The corresponding C functions are `poll(2)`, `read(2)` and, after a
    /// change, `timerfd_settime(2)`.
    static func wait(_ fd: Int32, timeoutMilliseconds: Int32) -> Notice {
        notice(
            polled: system_clock_change_poll(fd, timeoutMilliseconds),
            read: { system_clock_change_read(fd) },
            rearm: { system_clock_change_arm(fd) })
    }

    /// What the notifier's results mean, stated once. `poll` returns 1 when the
    /// timer is readable, 0 when the timeout ran out. Then `read` returns the
    /// expiration count (it cannot expire, armed this far out: nothing to
    /// report), or fails with ECANCELED when the clock was set (the event: the
    /// timer is armed again to clear it), EAGAIN when another reader or a
    /// spurious wake-up left nothing to read, EINTR on a signal. EINTR and
    /// EAGAIN mean "wait again"; any other error, or a failed re-arm, means the
    /// notifier is broken.
    static func notice(
        polled: Result<Int32, PrecisionTimerError.Errno>,
        read: () -> Result<Int64, PrecisionTimerError.Errno>,
        rearm: () -> Result<Void, PrecisionTimerError.Errno>
    ) -> Notice {
        switch polled {
        case .success(0): return .timedOut
        case .success: break
        case .failure(.interrupted): return .nothing
        case .failure(let errno): return .failed(errno)
        }
        switch read() {
        case .success:
            return .nothing
        case .failure(.canceled):
            switch rearm() {
            case .success: return .clockSet
            case .failure(let errno): return .failed(errno)
            }
        case .failure(.interrupted), .failure(.wouldBlock):
            return .nothing
        case .failure(let errno):
            return .failed(errno)
        }
    }
}

/// A weak reference to an engine (a ``VirtualClock`` or the watcher lists the
/// engines it drives; each engine holds its clock strongly).
struct TimerEngineBox: Sendable {
    weak var engine: TimerEngine?
}

extension PrecisionTimerError.Errno {
    /// Operation canceled: the wall clock was set under a timerfd armed with
    /// `TFD_TIMER_CANCEL_ON_SET`.
    fileprivate static let canceled = Self(rawValue: ECANCELED)
    /// Resource temporarily unavailable: a non-blocking read found nothing.
    fileprivate static let wouldBlock = Self(rawValue: EAGAIN)
}
