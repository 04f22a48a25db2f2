import CMonoClock
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: - timespec

extension PrecisionClock.Instant {
    /// The instant `ts` of a clock: `tv_sec` seconds plus `tv_nsec` nanoseconds,
    /// exactly, for any values (a `tv_nsec` that is negative or 1e9 and above is
    /// carried into the seconds); saturates at ``max`` / ``min`` when the sum does
    /// not fit in `Int64` nanoseconds.
    public init(_ ts: timespec) {
        self.init(nanoseconds: cmc_timespec_to_ns(ts))
    }

    /// This instant as a normalised `timespec` (`tv_nsec` in `0..<1_000_000_000`).
    public var timespec: timespec {
        cmc_timespec_from_ns(nanoseconds)
    }
}

extension Duration {
    /// This duration as a normalised `timespec`, whole nanoseconds rounded up and
    /// clamped to the `Int64` nanosecond range. (The Glibc overlay already
    /// provides the other direction, `Duration(_: timespec)`.)
    public var timespec: timespec {
        cmc_timespec_from_ns(saturatingNanoseconds)
    }
}

// MARK: - Dispatch

extension PrecisionClock.Instant {
    /// The instant of `CLOCK_MONOTONIC` that `time` names. On Linux, Dispatch's
    /// uptime is `CLOCK_MONOTONIC` in nanoseconds, so this is exact for instants of
    /// ``PrecisionClock/Source/monotonic``.
    public init(_ time: DispatchTime) {
        self.init(nanoseconds: time.uptimeNanoseconds > UInt64(Int64.max) ? .max : Int64(time.uptimeNanoseconds))
    }

    /// This instant, read as `CLOCK_MONOTONIC` nanoseconds, as a `DispatchTime`.
    /// Instants before boot clamp to the earliest `DispatchTime`.
    public var dispatchTime: DispatchTime {
        if nanoseconds == .max { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: UInt64(Swift.max(1, nanoseconds)))
    }

    /// The instant of `CLOCK_REALTIME` that `time` names.
    ///
    /// Dispatch encodes a wall time as the negated nanoseconds since 1970; this
    /// decodes it. `DispatchWallTime.distantFuture` maps to ``max``.
    public init(_ time: DispatchWallTime) {
        if time == .distantFuture {
            self.init(nanoseconds: .max)
            return
        }
        let raw = Int64(bitPattern: time.rawValue)
        self.init(nanoseconds: raw < 0 ? -raw : raw)
    }

    /// This instant, read as `CLOCK_REALTIME` nanoseconds, as a `DispatchWallTime`.
    /// Instants at or before 1970 + 2 ns clamp to the earliest wall time Dispatch
    /// encodes (3 ns after the epoch: long past), because Dispatch reads the
    /// encodings of those instants as `distantFuture` or "now".
    public var dispatchWallTime: DispatchWallTime {
        if nanoseconds == .max { return .distantFuture }
        return DispatchWallTime(timespec: PrecisionClock.Instant(nanoseconds: Swift.max(3, nanoseconds)).timespec)
    }
}
