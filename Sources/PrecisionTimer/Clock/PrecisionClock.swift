import CMonoClock

/// A clock that reads a Linux kernel clock directly, as fast as C can.
///
/// `PrecisionClock` conforms to the standard library's `Clock`, so Clock-generic
/// code (an `AsyncTimerSequence`, a debounce, `Task.sleep(until:clock:)`) runs on
/// it unchanged. Its instants are plain `Int64` nanoseconds of the kernel clock
/// it reads:
///
/// | source | kernel clock | across system suspend | standard-library peer |
/// |---|---|---|---|
/// | ``Source/monotonic`` | `CLOCK_MONOTONIC` | stops | `SuspendingClock`, `DispatchTime` |
/// | ``Source/boottime`` | `CLOCK_BOOTTIME` | keeps counting | `ContinuousClock` |
/// | ``Source/realtime`` | `CLOCK_REALTIME` | keeps counting; can jump when the time is set | `DispatchWallTime`, `Date` |
/// | ``Source/monotonicRaw`` | `CLOCK_MONOTONIC_RAW` | stops; not slewed by NTP; read only | — |
///
/// `now` is one vDSO call; `sleep(until:tolerance:)` is a timer of the
/// scheduler the calling task runs on (an actor on a ``TimerScheduler``, or a
/// task that prefers one), else of the shared ``TimerScheduler``, and never
/// blocks a cooperative-pool thread. For blocking,
/// precise waits see ``wait(until:strategy:)``.
public struct PrecisionClock: Clock, Sendable, Hashable {
    /// The standard library's `Duration`, the unit of the clock's arithmetic.
    public typealias Duration = Swift.Duration

    /// Which kernel clock a ``PrecisionClock`` reads.
    public enum Source: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `CLOCK_MONOTONIC`: steady, stops while the system is suspended.
        case monotonic = 0
        /// `CLOCK_BOOTTIME`: steady, keeps counting through suspend.
        case boottime = 1
        /// `CLOCK_REALTIME`: the wall clock; jumps when the system time is set.
        case realtime = 2
        /// `CLOCK_MONOTONIC_RAW`: the hardware counter without NTP slewing.
        /// Read only: the kernel cannot sleep on it. The calls that throw (the
        /// blocking waits with a sleeping strategy, the async sleeps,
        /// `withTimeout`, the `startingAt:` factories) throw
        /// ``PrecisionTimerError/unsupportedClock(_:)`` on it; the timer factories
        /// and ``FrameLink`` initializers that do not throw stop the program.
        /// ``WaitStrategy/spin`` works.
        case monotonicRaw = 3

        /// The Linux clock id.
        @inlinable
        public var clockID: clockid_t {
            switch self {
            case .monotonic: return cmc_clock_monotonic
            case .boottime: return cmc_clock_boottime
            case .realtime: return cmc_clock_realtime
            case .monotonicRaw: return cmc_clock_monotonic_raw
            }
        }

        /// Whether the kernel can sleep until a deadline on this clock.
        public var canSleep: Bool { self != .monotonicRaw }

        /// The kernel's name of the clock, such as `CLOCK_MONOTONIC`.
        public var description: String {
            switch self {
            case .monotonic: return "CLOCK_MONOTONIC"
            case .boottime: return "CLOCK_BOOTTIME"
            case .realtime: return "CLOCK_REALTIME"
            case .monotonicRaw: return "CLOCK_MONOTONIC_RAW"
            }
        }
    }

    /// The kernel clock this clock reads.
    public let source: Source

    /// The Linux clock id, cached so `now` is a single call.
    @usableFromInline
    let clockID: clockid_t

    /// A clock reading `CLOCK_MONOTONIC`.
    public init() {
        self.init(.monotonic)
    }

    /// A clock reading the given kernel clock.
    public init(_ source: Source) {
        self.source = source
        self.clockID = source.clockID
    }

    /// `CLOCK_MONOTONIC`: stops during suspend, like `SuspendingClock`.
    public static var monotonic: PrecisionClock { PrecisionClock(.monotonic) }
    /// `CLOCK_BOOTTIME`: counts through suspend, like `ContinuousClock`.
    public static var boottime: PrecisionClock { PrecisionClock(.boottime) }
    /// `CLOCK_REALTIME`: the wall clock.
    public static var realtime: PrecisionClock { PrecisionClock(.realtime) }
    /// `CLOCK_MONOTONIC_RAW`: read only.
    public static var monotonicRaw: PrecisionClock { PrecisionClock(.monotonicRaw) }

    /// The current instant of this clock: one `clock_gettime(2)` through the vDSO.
    @inlinable
    public var now: Instant {
        Instant(nanoseconds: cmc_now_ns(clockID))
    }

    /// The clock's resolution as the kernel reports it (`clock_getres(2)`);
    /// 1 ns for the high-resolution clocks.
    public var minimumResolution: Duration {
        let ns = (try? system_resolution_ns(clockID).get()) ?? 1
        return .nanoseconds(ns > 0 ? ns : 1)
    }

    /// Whether two clocks read the same kernel clock (same ``source``).
    public static func == (lhs: PrecisionClock, rhs: PrecisionClock) -> Bool {
        lhs.source == rhs.source
    }

    /// Hashes the clock's ``source``, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(source)
    }
}
