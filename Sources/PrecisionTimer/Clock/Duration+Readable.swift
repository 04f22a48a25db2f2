/// A `Duration` as a person would write it: `20 ns`, `1.3 µs`, `2.98 ms`, `1.5 s`.
///
/// The standard library prints `Duration.nanoseconds(20)` as `2e-08 seconds`;
/// ``Swift/Duration/readable`` prints it as `20 ns`:
///
/// ```swift
/// let result = try clock.wait(until: t0 + .milliseconds(2))
/// print("woke \(result.lateness.readable) late")   // woke 20 ns late
/// ```
///
/// The rules, exactly (the arithmetic is on the duration's attoseconds, in
/// integers, so nothing depends on `Double`):
///
/// - The unit is the largest of `ns`, `µs` (U+00B5 MICRO SIGN), `ms` and `s`
///   that the rounded magnitude reaches; below 1 ns it is `ns`.
/// - Three significant digits, rounded half away from zero, trailing zeros
///   (and a trailing point) dropped: 1,234 ns reads `1.23 µs`, 1,300 ns
///   `1.3 µs`, 2,000 ns `2 µs`. A value that rounds up to 1,000 of its unit
///   moves to the next unit: 999.5 µs reads `1 ms`, 999.4 µs `999 µs`.
/// - From 1,000 s up, whole seconds (digits before the point are never dropped):
///   1,234.5 s reads `1235 s`; no exponents, even for `Duration`'s extremes.
/// - Below 1 ns, three decimals of a nanosecond: 0.25 ns reads `0.25 ns`,
///   anything under 0.0005 ns reads `0 ns`.
/// - A negative duration reads with a leading `-` (ASCII hyphen-minus), unless it
///   rounds to zero: zero always reads `0 ns`.
public struct ReadableDuration: CustomStringConvertible, Sendable, Hashable {
    /// The duration being printed.
    public var duration: Duration

    /// `duration`, to be printed readably.
    public init(_ duration: Duration) {
        self.duration = duration
    }

    /// The duration as a person would write it; see ``ReadableDuration``.
    public var description: String {
        let attoseconds = duration.attoseconds
        let magnitude = attoseconds.magnitude  // UInt128: even Int128.min has one
        let units: [(attoseconds: UInt128, name: String)] = [
            (1_000_000_000, "ns"), (1_000_000_000_000, "µs"),
            (1_000_000_000_000_000, "ms"), (1_000_000_000_000_000_000, "s"),
        ]
        var u = 0
        while u + 1 < units.count && magnitude >= units[u + 1].attoseconds { u += 1 }
        while true {
            let unit = units[u].attoseconds
            let whole = magnitude / unit
            // Decimals for three significant digits; three below 1 ns.
            let decimals = whole == 0 ? 3 : Swift.max(0, 3 - Self.digitCount(whole))
            let step = unit / Self.powerOfTen(decimals)  // at least 1e6 attoseconds: even
            let steps = (magnitude + step / 2) / step    // no overflow: magnitude <= 2^127
            if u + 1 < units.count && steps >= 1_000 * Self.powerOfTen(decimals) {
                u += 1  // rounded up to 1,000 of this unit: the next unit reads it
                continue
            }
            if steps == 0 { return "0 ns" }
            let scale = Self.powerOfTen(decimals)
            var text = String(steps / scale)
            if decimals > 0 {
                var fraction = String(steps % scale)
                fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
                while fraction.last == "0" { fraction.removeLast() }
                if !fraction.isEmpty { text += "." + fraction }
            }
            return (attoseconds < 0 ? "-" : "") + text + " " + units[u].name
        }
    }

    private static func digitCount(_ value: UInt128) -> Int {
        var n = 1
        var v = value
        while v >= 10 {
            v /= 10
            n += 1
        }
        return n
    }

    private static func powerOfTen(_ exponent: Int) -> UInt128 {
        var p: UInt128 = 1
        for _ in 0..<exponent { p *= 10 }
        return p
    }
}

extension Duration {
    /// This duration as a person would write it, `20 ns` rather than
    /// `2e-08 seconds`: print it or interpolate it
    /// (`"woke \(result.lateness.readable) late"`). Three significant digits in
    /// `ns`, `µs`, `ms` or `s`; see ``ReadableDuration`` for the exact rules.
    public var readable: ReadableDuration { ReadableDuration(self) }
}
