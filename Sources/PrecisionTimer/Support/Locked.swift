import CMonoClock
import Synchronization

/// The standard `Synchronization.Mutex`, with its critical sections made
/// visible to ThreadSanitizer.
///
/// On Linux `Mutex` locks with futex calls inside the standard library, which
/// ThreadSanitizer does not instrument, so every access it guards looks like a
/// race in a `--sanitize=thread` build. `Locked` tells TSan "acquired" right
/// after the lock is taken and "released" right before it is dropped
/// (`cmc_tsan_acquire` / `cmc_tsan_release`, which compile to nothing outside
/// a TSan build, leaving two calls to empty C functions per critical section).
/// Otherwise it is `Mutex`, with the same `withLock`.
///
/// It adds no spinning of its own. On Linux the standard `Mutex` is a
/// priority-inheriting futex: a contended `withLock` already spins (with the
/// CPU's pause hint, reading the lock word without a barrier) before it
/// sleeps in the kernel, and an owner that unlocks with waiters hands the
/// lock to the first of them. `withLockIfAvailable` is no way to spin: each
/// failed try asks the kernel (`FUTEX_TRYLOCK_PI`), so a loop of tries is a
/// loop of system calls that keeps the waiting thread off the lock while the
/// owner takes it again and again.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>

    init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> Result {
        try withUnsafePointer(to: mutex) { address throws(E) -> Result in
            try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
                cmc_tsan_acquire(address)
                defer { cmc_tsan_release(address) }
                return try body(&value)
            }
        }
    }
}
