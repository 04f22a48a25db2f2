/// How a blocking wait reaches its deadline.
///
/// | strategy | CPU while waiting | lateness |
/// |---|---|---|
/// | ``sleep`` | none | the kernel's wake-up latency, less the lead it has learned |
/// | ``spin`` | one full core | a clock read and the pause hint |
/// | ``hybrid(margin:)`` | `margin` of spinning per wait | a spin's, when `margin` covers the oversleep; a sleep's otherwise |
/// | ``adaptive`` | as little spinning as this machine needs | a spin's, but for the rare oversleep past the learned margin |
///
/// Run `swift run -c release bench` for the figures on your machine.
public enum WaitStrategy: Sendable, Hashable {
    /// Kernel sleep only (`clock_nanosleep` with an absolute deadline); never spins.
    /// The calling thread's timer slack is lowered to 1 ns for the sleep and
    /// restored after, so the kernel does not add its default 50 µs.
    ///
    /// The sleep is aimed ``SleepLead/current`` before the deadline: the wake-up
    /// latency this machine has added to at least 99 % of recent sleeps, learned
    /// online. When a wake comes back before the deadline anyway (about one in a
    /// hundred), the wait sleeps again until the deadline itself. For exactly one
    /// `clock_nanosleep` aimed at the deadline, use `hybrid(margin: .zero)`.
    case sleep
    /// Busy-wait with the CPU's pause hint. Works on every clock, including
    /// `CLOCK_MONOTONIC_RAW`.
    case spin
    /// Sleep until `deadline - margin`, then spin. A negative margin makes the
    /// wait throw ``PrecisionTimerError/invalidArgument(_:)``.
    case hybrid(margin: Duration)
    /// ``hybrid(margin:)`` with a margin learned online from this machine's
    /// observed oversleep: a high percentile (p99.5) of recent kernel wake lateness
    /// plus a small headroom, clamped to ``AdaptiveMargin/bounds``.
    case adaptive
}

/// What a wait observed.
public struct WaitResult: Sendable, Hashable {
    /// The deadline that was waited for.
    public var deadline: PrecisionClock.Instant
    /// The clock's reading when the wait returned; never before ``deadline``.
    public var woke: PrecisionClock.Instant

    /// How late the wait returned, in nanoseconds (never negative).
    package var latenessNanoseconds: Int64 { woke.nanoseconds.saturatingSubtract(deadline.nanoseconds) }

    /// How late the wait returned.
    public var lateness: Duration { deadline.duration(to: woke) }
}
