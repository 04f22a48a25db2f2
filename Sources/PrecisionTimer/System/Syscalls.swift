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
// Two calls hand their raw results to the one type that knows what they mean:
// the futex wait's to `Doorbell` (EAGAIN is "the word had changed", EINTR goes
// back to the engine, which decides), the wall-clock notifier's poll and read to
// `WallClockWatcher.wait(_:timeoutMilliseconds:)` (ECANCELED is "the clock was
// set", EAGAIN and EINTR "wait again"). What cannot fail is called directly: the
// clock reads (`cmc_now_ns`, `cmc_spin_until`), `cmc_cpu_relax`, `cmc_thread_id`,
// `cmc_cpu_count`, the timespec conversions, the handler marker and the futex
// word's load and wake.

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
func valueOrErrno<Value: FixedWidthInteger & SignedInteger>(
    retryOnInterrupt: Bool, _ call: () -> Value
) -> Result<Value, PrecisionTimerError.Errno> {
    while true {
        let rc = call()
        if rc >= 0 { return .success(rc) }
        if rc == -Value(EINTR) && retryOnInterrupt { continue }
        return .failure(PrecisionTimerError.Errno(rawValue: Int32(truncatingIfNeeded: 0 &- rc)))
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
/// `Doorbell.wait` says what they mean.
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

/// `sched_setattr(2)`: the calling thread's time slice under the fair
/// scheduler, in nanoseconds (policy and nice value kept).
func system_thread_slice_set(_ ns: UInt64) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_thread_slice_set(ns) }
}

/// `sched_getattr(2)`: the calling thread's time slice in nanoseconds (0: the
/// kernel keeps none).
func system_thread_slice_get() -> Result<UInt64, PrecisionTimerError.Errno> {
    var ns: UInt64 = 0
    return nothingOrErrno(retryOnInterrupt: false) { cmc_thread_slice_get(&ns) }.map { ns }
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

/// `pthread_setname_np(3)` on the calling thread (CMonoClock cuts the name to
/// the 15 bytes Linux keeps).
func system_thread_set_name(_ name: String) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_thread_set_name(name) }
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

// MARK: - Wall-clock change notifier

/// `timerfd_create(2)` on CLOCK_REALTIME, non-blocking, close-on-exec: the descriptor.
func system_clock_change_create() -> Result<Int32, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_clock_change_create() }
}

/// `timerfd_settime(2)`, far out with `TFD_TIMER_CANCEL_ON_SET`.
func system_clock_change_arm(_ fd: Int32) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_clock_change_arm(fd) }
}

/// `poll(2)` for input: 1 when readable, 0 when `timeoutMilliseconds` ran out.
/// EINTR is not retried (the timeout is relative): `WallClockWatcher.wait` says
/// what the results mean.
func system_clock_change_poll(_ fd: Int32, _ timeoutMilliseconds: Int32) -> Result<Int32, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_clock_change_poll(fd, timeoutMilliseconds) }
}

/// `read(2)` of the expiration count, raw: ECANCELED, EAGAIN and EINTR come back
/// as they are; `WallClockWatcher.wait` says what they mean.
func system_clock_change_read(_ fd: Int32) -> Result<Int64, PrecisionTimerError.Errno> {
    valueOrErrno(retryOnInterrupt: false) { cmc_clock_change_read(fd) }
}

/// `close(2)`. EINTR is not retried: Linux has released the descriptor already,
/// and a second close could close one another thread has just opened.
func system_clock_change_close(_ fd: Int32) -> Result<Void, PrecisionTimerError.Errno> {
    nothingOrErrno(retryOnInterrupt: false) { cmc_clock_change_close(fd) }
}
