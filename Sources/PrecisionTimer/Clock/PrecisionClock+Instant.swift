/// `PrecisionClock.Instant`: whole nanoseconds of one kernel clock, its
/// saturating arithmetic, and exact conversions to and from `Duration`.
extension PrecisionClock {
    /// A point on a ``PrecisionClock``: whole nanoseconds of its kernel clock.
    ///
    /// Arithmetic saturates at ``min`` and ``max`` instead of trapping, so a
    /// deadline computed far in the future stays "far in the future". Waits treat a
    /// saturated deadline (``max``) as out of range and throw rather than block
    /// forever.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The standard library's `Duration`: the distance between two instants.
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

        /// Whether `lhs` comes before `rhs` on the clock.
        @inlinable
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.nanoseconds < rhs.nanoseconds
        }

        /// The instant `rhs` after `lhs`, saturating at ``max`` / ``min``; see
        /// ``advanced(by:)``.
        @inlinable
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        /// The instant `rhs` before `lhs`, saturating at ``min`` / ``max``.
        @inlinable
        public static func - (lhs: Instant, rhs: Duration) -> Instant {
            // Not `advanced(by: .zero - rhs)`: negating the most negative
            // `Duration` traps. Subtracting `rhs` rounded down is the same instant.
            Instant(nanoseconds: Int64.clamping(Int128(lhs.nanoseconds) - rhs.nanoseconds128RoundedDown))
        }
        /// The exact duration from `rhs` to `lhs` (negative when `lhs` is earlier).
        @inlinable
        public static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }
        /// Moves `lhs` later by `rhs`, saturating at ``max`` / ``min``.
        @inlinable
        public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }
        /// Moves `lhs` earlier by `rhs`, saturating at ``min`` / ``max``.
        @inlinable
        public static func -= (lhs: inout Instant, rhs: Duration) { lhs = lhs - rhs }

        /// The instant as seconds with nine decimals and an `s`, such as
        /// `12.000150000s` (floor of the seconds, so negative instants read
        /// `-1.999999999s` for −1 ns).
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
    ///
    /// Read from the `Int128` attoseconds, not `components`: a duration whose
    /// seconds do not fit in `Int64` (`.seconds(1e20)`) would trap there.
    @inlinable
    var nanoseconds128RoundedUp: Int128 {
        let attoseconds = self.attoseconds
        // Truncating division already rounds negative values up.
        var ns = attoseconds / 1_000_000_000
        if attoseconds % 1_000_000_000 > 0 {
            ns += 1
        }
        return ns
    }

    /// This duration in whole nanoseconds, rounded toward negative infinity.
    @inlinable
    var nanoseconds128RoundedDown: Int128 {
        let attoseconds = self.attoseconds
        var ns = attoseconds / 1_000_000_000
        if attoseconds % 1_000_000_000 < 0 {
            ns -= 1
        }
        return ns
    }

    /// ``nanoseconds128RoundedUp`` clamped to the `Int64` range.
    ///
    /// A delay from zero to about 2.6 hours (every timeout's) takes a path with
    /// no 128-bit division: 10^9 = 2^9 × 5^9, and below 2^73 attoseconds the
    /// quotient by 2^9 fits in 64 bits, so one 64-bit division by the constant
    /// 5^9 (which the compiler turns into a multiplication) gives the result.
    @inlinable
    var saturatingNanoseconds: Int64 {
        let attoseconds = self.attoseconds
        guard attoseconds >= 0 && attoseconds < Int128(1) << 73 else { return Int64.clamping(nanoseconds128RoundedUp) }
        let shifted = UInt64(truncatingIfNeeded: attoseconds >> 9)
        let ns = shifted / 1_953_125  // 5^9
        let exact = attoseconds & 511 == 0 && ns &* 1_953_125 == shifted
        return Int64(truncatingIfNeeded: exact ? ns : ns &+ 1)
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
        Int64(exactly: nanoseconds128RoundedUp)
    }
}
