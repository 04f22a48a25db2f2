import CMonoClock

/// A 32-bit futex word at a stable address: the timer engine's doorbell.
///
/// Whoever changes what the engine thread is waiting for bumps the word and
/// wakes its waiters; a waiter that read the old value first cannot miss the
/// bump (the kernel compares the word before it sleeps). No polling.
final class WakeWord: @unchecked Sendable {
    // @unchecked: the word is only touched through the C layer's atomic calls.
    private let word: UnsafeMutablePointer<UInt32>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit {
        word.deallocate()
    }

    /// The current value (acquire).
    @inline(__always)
    var value: UInt32 { cmc_futex_load(word) }

    /// Changes the word and wakes every waiter.
    func bumpAndWake() {
        cmc_futex_bump_and_wake(word)
    }

    /// Waits while the word still equals `expected`, until `deadline` on `clock`
    /// (CLOCK_MONOTONIC or CLOCK_REALTIME; `Int64.max` waits without a deadline).
    /// Returns 0 when woken or the word had changed, `ETIMEDOUT` at the deadline.
    @discardableResult
    func wait(expecting expected: UInt32, clock: clockid_t, deadline: Int64) -> Int32 {
        cmc_futex_wait_until(word, expected, clock, deadline)
    }
}
