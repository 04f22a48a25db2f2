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
/// Otherwise it is `Mutex`, with the same `withLock`, which spins briefly
/// before it sleeps (see ``spinsBeforeSleeping``).
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>

    init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// How many times a thread that finds the lock taken retries (with the
    /// CPU's pause hint between tries, a few microseconds in all) before it
    /// sleeps in the kernel. The sections it guards last well under a
    /// microsecond; sleeping at once would make two threads that take turns
    /// (a thread pushing timeouts back and the scheduler's thread at a
    /// deadline) hand the lock over through a futex wake-up each time, tens
    /// of microseconds apiece.
    static var spinsBeforeSleeping: Int { 128 }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> Result {
        try withUnsafePointer(to: mutex) { address throws(E) -> Result in
            for _ in 0..<Self.spinsBeforeSleeping {
                let done = try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
                    cmc_tsan_acquire(address)
                    defer { cmc_tsan_release(address) }
                    return try body(&value)
                }
                if let done { return done }
                cmc_cpu_relax()
            }
            return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
                cmc_tsan_acquire(address)
                defer { cmc_tsan_release(address) }
                return try body(&value)
            }
        }
    }
}
