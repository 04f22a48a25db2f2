import CMonoClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The system calls the library makes through CMonoClock, one line each, and the
// one place that says what their error numbers mean. (The model is swift-system:
// `Sources/System/Internals/Syscalls.swift` and `valueOrErrno(retryOnInterrupt:)`
// in `Sources/System/Util.swift`.)
//
// CMonoClock's wrappers make their call and hand back what it returned: 0 or an
// error number (or a value or a negated error number). They never retry, never
// reinterpret and keep no state. Here, each shim states whether EINTR is retried:
// only calls whose arguments still mean the same after a signal are, which is why
// every sleep takes an absolute deadline. Callers turn a failure into the typed
// ``PrecisionTimerError/system(_:operation:)`` with `get(operation:)`.
//
// The futex wait's policy (EAGAIN is "the word had changed", EINTR goes back to
// the engine, which decides) lives with the word itself, in `WakeWord`. The engine
// thread's own calls (`cmc_now_ns`, `cmc_spin_until`, the timer slack, the marker,
// the thread's name, priority and CPU) are still made directly in
// Engine/TimerEngine.swift and Engine/TimerScheduler.swift, whose callers read the
// error number themselves and never retry.

// MARK: - Error policy

/// Calls `call`, which returns 0 or an error number, and calls it again while it
/// returns `EINTR` if `retryOnInterrupt` is true.
///
/// - Returns: success for 0, else the error number.
@inline(__always)
func nothingOrErrno(
    retryOnInterrupt: Bool, _ call: () -> Int32
) -> Result<Void, PrecisionTimerError.Errno> {
    while true {
        let rc = call()
        if rc == 0 { return .success(()) }
        if rc == EINTR && retryOnInterrupt { continue }
        return .failure(PrecisionTimerError.Errno(rawValue: rc))
    }
}

/// Calls `call`, which returns a non-negative value or a negated error number,
/// and calls it again while it returns `-EINTR` if `retryOnInterrupt` is true.
///
/// - Returns: the value, or the error number.
@inline(__always)
func valueOrErrno(
    retryOnInterrupt: Bool, _ call: () -> Int32
) -> Result<Int32, PrecisionTimerError.Errno> {
    while true {
        let rc = call()
        if rc >= 0 { return .success(rc) }
        if rc == -EINTR && retryOnInterrupt { continue }
        return .failure(PrecisionTimerError.Errno(rawValue: -rc))
    }
}

extension Result where Failure == PrecisionTimerError.Errno {
    /// The value, or ``PrecisionTimerError/system(_:operation:)`` naming
    /// `operation` with the error number.
    @inline(__always)
    func get(operation: @autoclosure () -> String) throws(PrecisionTimerError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let errno): throw .system(errno, operation: operation())
        }
    }
}

// MARK: - Shims

/// `clock_nanosleep(2)` with `TIMER_ABSTIME`; EINTR retried with the same deadline.
func system_sleep_until(_ clock: clockid_t, _ deadline: Int64) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: true) { cmc_sleep_until(clock, deadline) }
}

/// `futex(2)` with `FUTEX_WAIT_BITSET`, raw: 0, EAGAIN, ETIMEDOUT, EINTR, EINVAL.
/// `WakeWord.wait` says what they mean.
@inline(__always)
func system_futex_wait_until(
    _ word: UnsafeMutablePointer<UInt32>, _ expected: UInt32, _ clock: clockid_t, _ deadline: Int64
) -> Int32 {
    cmc_futex_wait_until(word, expected, clock, deadline)
}

/// `clock_getres(2)`, in nanoseconds.
func system_resolution_ns(_ clock: clockid_t) -> Result<Int64, PrecisionTimerError.Errno> {
    var ns: Int64 = 0
    return nothingOrErrno(retryOnInterrupt: false) { cmc_resolution_ns(clock, &ns) }.map { ns }
}

/// `prctl(2)` with `PR_GET_TIMERSLACK`, in nanoseconds.
func system_timer_slack_get() -> Result<UInt64, PrecisionTimerError.Errno> {
    var ns: UInt64 = 0
    return nothingOrErrno(retryOnInterrupt: false) { cmc_timer_slack_get(&ns) }.map { ns }
}

/// `prctl(2)` with `PR_SET_TIMERSLACK`.
func system_timer_slack_set(_ ns: UInt64) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_timer_slack_set(ns) }
}

/// `pthread_setschedparam(3)` to SCHED_FIFO at `priority` (the kernel's EINVAL
/// outside the priority range: callers check it first).
func system_realtime_request(_ priority: Int32) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_realtime_request(priority) }
}

/// `pthread_setschedparam(3)` back to SCHED_OTHER.
func system_realtime_drop() -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_realtime_drop() }
}

/// `pthread_getschedparam(3)`: the calling thread's policy.
func system_thread_sched_policy() -> Result<Int32, PrecisionTimerError.Errno> {
    var policy: Int32 = 0
    return nothingOrErrno(retryOnInterrupt: false) { cmc_thread_sched_policy(&policy) }.map { policy }
}

/// `sched_get_priority_min(2)` for SCHED_FIFO.
func system_realtime_priority_min() -> Result<Int32, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_realtime_priority_min() }
}

/// `sched_get_priority_max(2)` for SCHED_FIFO.
func system_realtime_priority_max() -> Result<Int32, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_realtime_priority_max() }
}

/// `pthread_setaffinity_np(3)` to the `count` CPUs at `cpus` (no record of the
/// mask it replaces: `ThreadControls` keeps that).
func system_affinity_set_cpus(
    _ cpus: UnsafePointer<Int32>?, _ count: Int32
) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_affinity_set_cpus(cpus, count) }
}

/// `pthread_getaffinity_np(3)`: writes up to `capacity` CPU ids of the calling
/// thread's mask and returns how many there are.
func system_affinity_get_cpus(
    _ cpus: UnsafeMutablePointer<Int32>, _ capacity: Int32
) -> Result<Int32, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_affinity_get_cpus(cpus, capacity) }
}

/// `mlockall(2)` with `MCL_CURRENT | MCL_FUTURE`.
func system_memory_lock() -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_memory_lock() }
}

/// `munlockall(2)`.
func system_memory_unlock() -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_memory_unlock() }
}

/// `pthread_key_create(3)`: a thread-specific slot; `destructor` gets a thread's
/// non-nil value when that thread ends.
func system_thread_key_create(
    _ destructor: @convention(c) (UnsafeMutableRawPointer?) -> Void
) -> Result<pthread_key_t, PrecisionTimerError.Errno> {
    var key = pthread_key_t()
    return nothingOrErrno(retryOnInterrupt: false) { pthread_key_create(&key, destructor) }.map { key }
}

/// `pthread_setspecific(3)`: the calling thread's value in slot `key`.
func system_thread_set_specific(
    _ key: pthread_key_t, _ value: UnsafeRawPointer?
) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { pthread_setspecific(key, value) }
}
