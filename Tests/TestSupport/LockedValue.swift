import CMonoClock
import Synchronization

/// A value behind a lock that ThreadSanitizer sees, shareable with threads.
///
/// The standard `Synchronization.Mutex`, whose critical sections are announced
/// to TSan (`cmc_tsan_acquire` / `cmc_tsan_release` on this object's address,
/// empty calls outside a TSan build): on Linux `Mutex` locks with futex calls
/// TSan does not instrument, so unannounced, every access it guards would look
/// like a race. (The library's internal `Locked` is a pthread mutex, which
/// TSan understands; this module cannot use it, as it is built by a plain
/// `swift build` as well, where `@testable import` is not available in every
/// configuration.)
public final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    public func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        return mutex.withLock { value in
            cmc_tsan_acquire(address)
            defer { cmc_tsan_release(address) }
            return body(&value)
        }
    }
}
