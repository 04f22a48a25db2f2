#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `PrecisionClock.Instant` ⇄ `Date`, for instants of the wall clock.
///
/// An instant of ``PrecisionClock/Source/realtime`` is nanoseconds since
/// 1970-01-01 00:00:00 UTC, which is what `Date` measures (in `Double` seconds,
/// from 2001). Only realtime instants convert meaningfully: an instant of a
/// steady clock counts from boot, and read as a date it lands in the 1970s.
extension PrecisionClock.Instant {
    /// Seconds from 1970 to 2001, the reference date of `Date`.
    private static let referenceDateSince1970: Int64 = 978_307_200

    /// The ``PrecisionClock/Source/realtime`` instant of `date`: nanoseconds since
    /// 1970, rounded to the nearest nanosecond (half away from zero) from the
    /// `Double` the date holds.
    ///
    /// Saturates: a date before 1677-09-21 (such as `Date.distantPast`) gives
    /// ``min``, one after 2262-04-11 (such as `Date.distantFuture`) gives ``max``;
    /// a NaN date gives ``min`` (already past, never "never").
    public init(_ date: Date) {
        let t = date.timeIntervalSinceReferenceDate  // seconds since 2001
        guard !t.isNaN else {
            self.init(nanoseconds: .min)
            return
        }
        // Int64 nanoseconds span ±9,223,372,036.85 s around 1970; these bounds
        // (seconds since 2001) are well outside that and well inside Int64.
        if t > 1e10 {
            self.init(nanoseconds: .max)
            return
        }
        if t < -1e11 {
            self.init(nanoseconds: .min)
            return
        }
        // t − ⌊t⌋ is exact in Double; only the fraction's nanoseconds round.
        let whole = t.rounded(.down)
        let fraction = Int64(((t - whole) * 1e9).rounded(.toNearestOrAwayFromZero))  // 0 ... 1e9
        let seconds = Int128(Int64(whole)) + Int128(Self.referenceDateSince1970)
        self.init(nanoseconds: Int64.clamping(seconds * 1_000_000_000 + Int128(fraction)))
    }

    /// This instant, read as ``PrecisionClock/Source/realtime`` nanoseconds since
    /// 1970, as a `Date`. `Date` holds a `Double` of seconds since 2001, so it
    /// keeps about 0.12 µs of precision for dates of this century (a round trip
    /// through `Date` is within 60 ns then, exact near 2001). ``min`` and
    /// ``max`` give the dates of 1677 and 2262, not `distantPast` / `distantFuture`.
    public var date: Date {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        // Whole seconds since 2001 are exact in Double; adding the fraction is
        // the one rounding.
        let sinceReference = Double(seconds - Self.referenceDateSince1970) + Double(rest) / 1e9
        return Date(timeIntervalSinceReferenceDate: sinceReference)
    }
}

extension Date {
    /// The date of `instant`, a ``PrecisionClock/Source/realtime`` instant
    /// (nanoseconds since 1970); the same as ``PrecisionClock/Instant/date``.
    public init(_ instant: PrecisionClock.Instant) {
        self = instant.date
    }
}
