/// A repeating timer's period, exact: `whole + remainder / denominator`
/// nanoseconds.
///
/// A `Duration` keeps its attoseconds (`.seconds(1) / 48` is 20,833,333 ns and
/// 333,333,333 attoseconds over 10⁹), and a rate given as a whole number of
/// ticks per duration keeps its fraction exactly (60,000 frames per 1,001 s).
/// The offset of tick `k` is computed from the exact product and rounded once,
/// to the nearest nanosecond, so a grid never accumulates a rounding error.
struct Period: Hashable, Sendable {
    /// Whole nanoseconds.
    let whole: Int64
    /// The fraction of a nanosecond: `remainder / denominator`, in `0 ..< 1`.
    let remainder: Int64
    let denominator: Int64

    /// A one-shot's "period".
    static let zero = Period(whole: 0, remainder: 0, denominator: 1)

    private init(whole: Int64, remainder: Int64, denominator: Int64) {
        self.whole = whole
        self.remainder = remainder
        self.denominator = denominator
    }

    /// A period of whole nanoseconds.
    init(nanoseconds: Int64) {
        self.init(whole: nanoseconds, remainder: 0, denominator: 1)
    }

    /// `count` ticks per `span` attoseconds, exactly; at least 1 ns (a shorter
    /// period is a documented clamp), and a whole part past `Int64` saturates
    /// (its ticks then never come).
    /// - Precondition: `count` is positive and `span` is positive.
    init(ticks count: Int64, perAttoseconds span: Int128) {
        precondition(count > 0 && span > 0, "a period needs a positive count and span")
        let (denominator, overflow) = count.multipliedReportingOverflow(by: 1_000_000_000)
        precondition(!overflow, "at most \(Int64.max / 1_000_000_000) ticks per span")
        let whole = span / Int128(denominator)
        guard whole >= 1 else {
            self.init(nanoseconds: 1)
            return
        }
        guard whole < Int128(Int64.max) else {
            self.init(nanoseconds: .max)
            return
        }
        var remainder = Int64(span % Int128(denominator))
        var den = denominator
        let divisor = Self.gcd(remainder, den)
        if divisor > 1 {
            remainder /= divisor
            den /= divisor
        }
        self.init(whole: Int64(whole), remainder: remainder, denominator: remainder == 0 ? 1 : den)
    }

    /// The period `duration`, keeping its attoseconds.
    init(_ duration: Duration) {
        self.init(ticks: 1, perAttoseconds: Swift.max(duration.attoseconds, 1))
    }

    var isZero: Bool { whole == 0 && remainder == 0 }

    /// The period as a `Duration`, to the attosecond (the fraction of a rate that
    /// does not divide evenly is rounded to the nearest attosecond).
    var duration: Duration {
        let fraction = (Int128(remainder) * 1_000_000_000 + Int128(denominator / 2)) / Int128(denominator)
        return Duration(attoseconds: Int128(whole) * 1_000_000_000 + fraction)
    }

    /// The largest leeway a timer of this period keeps: 1 ns under its whole
    /// nanoseconds (two grid ticks are at least that many apart), so that each
    /// tick's window ends before the next tick is due. A window that reached
    /// the next tick would let a wake-up at its end serve both, and a `.skip`
    /// timer would then report every other tick as missed.
    var leewayLimit: Int64 { Swift.max(0, whole - 1) }

    /// The offset of `ticks` periods, rounded to the nearest nanosecond;
    /// saturating. `ticks` is never negative on a grid.
    @inline(__always)
    func offset(ofTicks ticks: Int64) -> Int64 {
        let base = ticks.saturatingMultiply(whole)
        guard remainder != 0, ticks > 0 else { return base }
        return base.saturatingAdd(Int64(fractionalOffset(ofTicks: ticks)))
    }

    /// The same offset in 128 bits, for spans past `Int64` nanoseconds.
    func exactOffset(ofTicks ticks: Int64) -> Int128 {
        Int128(ticks) * Int128(whole) + (ticks > 0 ? fractionalOffset(ofTicks: ticks) : 0)
    }

    /// `ticks × remainder / denominator`, rounded to nearest (at most `ticks`).
    @inline(__always)
    private func fractionalOffset(ofTicks ticks: Int64) -> Int128 {
        (Int128(ticks) * Int128(remainder) + Int128(denominator / 2)) / Int128(denominator)
    }

    /// About how many whole periods fit in `span` nanoseconds (`span ≥ 0`): the
    /// floor of the exact quotient, which a grid then adjusts for its rounding.
    func ticks(in span: Int64) -> Int64 {
        guard span > 0, !isZero else { return 0 }
        guard remainder != 0 else { return span / whole }
        let exact = Int128(whole) * Int128(denominator) + Int128(remainder)
        return Int64(clamping: Int128(span) * Int128(denominator) / exact)
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
