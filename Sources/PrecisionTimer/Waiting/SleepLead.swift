/// How early a ``WaitStrategy/sleep`` wait aims the kernel's timer: the wake-up
/// latency this machine (nearly) always adds, learned from the sleep's own wakes.
///
/// A kernel sleep returns some time after its deadline even with the timer slack
/// at 1 ns: the interrupt has to arrive and the CPU has to leave its idle state
/// (on a virtual machine, often tens of microseconds). A `.sleep` wait therefore asks
/// the kernel to wake it `lead` before the deadline, where `lead` is the 1st
/// percentile of the oversleep of the last 256 such sleeps (recomputed every 16;
/// zero until 64 are known), clamped to ``bounds``. About one wake in a hundred
/// then comes back before the deadline, and the wait sleeps again until the
/// deadline itself: it never spins and never returns early.
public enum SleepLead {
    /// The range the learned lead is clamped to: zero to 2 ms.
    public static let bounds: ClosedRange<Duration> = .zero ... .milliseconds(2)

    /// The percentile of recent oversleep the lead is set to: 0.01 (1 %).
    public static let quantile = OversleepEstimator.leadQuantile

    static let shared = Locked(OversleepEstimator())

    /// The lead `.sleep` waits use now.
    public static var current: Duration {
        .nanoseconds(shared.withLock { $0.lead })
    }

    /// Forgets what was learned (for tests and benchmarks): waits aim at the
    /// deadline itself until 64 wakes are known again.
    package static func reset() {
        shared.withLock { $0 = OversleepEstimator() }
    }
}
