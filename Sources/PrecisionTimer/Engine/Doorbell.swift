import CMonoClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A doorbell: a 32-bit futex word at a stable address that waiters sleep on.
///
/// Whoever changes what a waiter is waiting for rings it (bumps the word and
/// wakes every waiter); a waiter that read the old value first cannot miss the
/// ring (the kernel compares the word before it sleeps). No polling. The engine
/// has two: `doorbell`, which its thread sleeps on, and `handlerDone`, which a
/// `cancel()` waiting for a running handler sleeps on.
final class Doorbell: @unchecked Sendable {
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

    /// Rings: changes the word and wakes every waiter (a system call: never
    /// under the engine's lock).
    func ring() {
        cmc_futex_bump_and_wake(word)
    }

    /// Waits while the word still equals `expected`, until `deadline` on `clock`
    /// (CLOCK_MONOTONIC or CLOCK_REALTIME; `Int64.max` waits without a deadline).
    ///
    /// Returns 0 when woken or the word had changed, `ETIMEDOUT` at the deadline
    /// (a deadline before the clock's zero has passed: at once), `EINTR` when a
    /// signal ended the wait (not retried here: the caller checks the word and
    /// waits again for the same deadline), or another error number.
    /// The corresponding C function is `futex(2)` with `FUTEX_WAIT_BITSET`.
    @discardableResult
    func wait(expecting expected: UInt32, clock: clockid_t, deadline: Int64) -> Int32 {
        // The kernel refuses a negative deadline (EINVAL); it has passed.
        let rc = system_futex_wait_until(word, expected, clock, Swift.max(0, deadline))
        // EAGAIN: the word no longer held `expected` when the kernel looked, so
        // the doorbell rang before the wait began; a wake-up like any other.
        return rc == EAGAIN ? 0 : rc
    }
}
