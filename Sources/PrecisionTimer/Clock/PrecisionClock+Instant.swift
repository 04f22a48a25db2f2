extension PrecisionClock {
    /// A point on a ``PrecisionClock``: whole nanoseconds of its kernel clock.
    ///
    /// Arithmetic saturates at ``min`` and ``max`` instead of trapping, so a
    /// deadline computed far in the future stays "far in the future". Waits treat a
    /// saturated deadline (``max``) as out of range and throw rather than block
    /// forever.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        public typealias Duration = Swift.Duration

        /// Nanoseconds since the clock's epoch (boot for the steady clocks, 1970 for
        /// the wall clock).
        public var nanoseconds: Int64

        /// An instant at `nanoseconds` of the clock.
        @inlinable
        public init(nanoseconds: Int64) {
            self.nanoseconds = nanoseconds
        }

        /// The earliest representable instant.
        public static var min: Instant { Instant(nanoseconds: .min) }
        /// The latest representable instant; arithmetic saturates here.
        public static var max: Instant { Instant(nanoseconds: .max) }

        /// This instant moved by `duration`, saturating at ``min`` / ``max``.
        @inlinable
        public func advanced(by duration: Duration) -> Instant {
            Instant(nanoseconds: Int64.clamping(Int128(nanoseconds) + duration.nanoseconds128RoundedUp))
        }

        /// The exact duration from this instant to `other`.
        @inlinable
        public func duration(to other: Instant) -> Duration {
            let (difference, overflow) = other.nanoseconds.subtractingReportingOverflow(nanoseconds)
            return overflow ? Duration.exactNanoseconds(Int128(other.nanoseconds) - Int128(nanoseconds))
                : .nanoseconds(difference)
        }

        @inlinable
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.nanoseconds < rhs.nanoseconds
        }

        @inlinable
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        @inlinable
        public static func - (lhs: Instant, rhs: Duration) -> Instant {
            lhs.advanced(by: .zero - rhs)
        }
        @inlinable
        public static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }
        @inlinable
        public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }
        @inlinable
        public static func -= (lhs: inout Instant, rhs: Duration) { lhs = lhs - rhs }

        public var description: String {
            let sec = nanoseconds / 1_000_000_000
            var frac = nanoseconds % 1_000_000_000
            var s = sec
            if frac < 0 {
                frac += 1_000_000_000
                s -= 1
            }
            let digits = String(frac)
            return "\(s).\(String(repeating: "0", count: 9 - digits.count))\(digits)s"
        }
    }
}

extension Int64 {
    /// `value` clamped to `Int64.min ... Int64.max`.
    @inlinable
    static func clamping(_ value: Int128) -> Int64 {
        value > Int128(Int64.max) ? .max : (value < Int128(Int64.min) ? .min : Int64(value))
    }

    /// `self + other`, clamped to `Int64.min ... Int64.max`.
    @inlinable
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (r, o) = addingReportingOverflow(other)
        return o ? (other > 0 ? .max : .min) : r
    }

    /// `self - other`, clamped to `Int64.min ... Int64.max`.
    @inlinable
    func saturatingSubtract(_ other: Int64) -> Int64 {
        let (r, o) = subtractingReportingOverflow(other)
        return o ? (other < 0 ? .max : .min) : r
    }

    /// `self * other`, clamped to `Int64.min ... Int64.max`.
    @inlinable
    func saturatingMultiply(_ other: Int64) -> Int64 {
        let (r, o) = multipliedReportingOverflow(by: other)
        return o ? ((self < 0) != (other < 0) ? .min : .max) : r
    }
}

extension Duration {
    /// This duration in whole nanoseconds, rounded toward positive infinity (so a
    /// deadline built from it is never early). Exact: no clamping.
    @inlinable
    var nanoseconds128RoundedUp: Int128 {
        let (seconds, attoseconds) = components
        // attoseconds carries the sign of the duration and |attoseconds| < 1e18,
        // so truncating division already rounds negative values up.
        var ns = Int128(seconds) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000)
        if attoseconds % 1_000_000_000 > 0 {
            ns += 1
        }
        return ns
    }

    /// ``nanoseconds128RoundedUp`` clamped to the `Int64` range.
    @inlinable
    var saturatingNanoseconds: Int64 {
        Int64.clamping(nanoseconds128RoundedUp)
    }

    /// The duration of `nanoseconds`, exact for any `Int128` value in range.
    @inlinable
    static func exactNanoseconds(_ nanoseconds: Int128) -> Duration {
        let seconds = nanoseconds / 1_000_000_000
        let rest = nanoseconds % 1_000_000_000
        return Duration(secondsComponent: Int64(seconds), attosecondsComponent: Int64(rest) * 1_000_000_000)
    }

    /// Whole nanoseconds of this duration if it fits in `Int64` exactly (sub-
    /// nanosecond parts rounded up), nil otherwise.
    @inlinable
    var exactInt64Nanoseconds: Int64? {
        let (seconds, attoseconds) = components
        let (s, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        var extra = attoseconds / 1_000_000_000
        if attoseconds % 1_000_000_000 > 0 { extra += 1 }
        let (r, o2) = s.addingReportingOverflow(extra)
        return o1 || o2 ? nil : r
    }
}
