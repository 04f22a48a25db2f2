//===----------------------------------------------------------------------===//
// CMonoClock: the thin C layer under PrecisionTimer.
//
// It holds what Swift cannot call well by itself, one system call per wrapper:
// - the clock ids as constants, and the vDSO clock read and the spin hint as
//   `static inline` hot calls;
// - the conversions between Int64 nanoseconds and `struct timespec` (the
//   deadline comparisons use libbsd's `timespeccmp`, in CMonoClock.c);
// - absolute sleeps (`clock_nanosleep`) and the futex wake-up word;
// - the thread controls (`prctl` timer slack, SCHED_FIFO, affinity, mlockall,
//   thread name and id) and the wall-clock change notifier (timerfd);
// - the per-thread no-wait marker and the ThreadSanitizer annotations.
//
// Wrappers return 0 or the error number, or a value or a negated error number
// (never leave it in `errno` to be read later); they do not retry, do not
// reinterpret errors and keep no state. What an error number means, and whether
// EINTR is retried, is decided once, in Swift
// (Sources/PrecisionTimer/System/Syscalls.swift); so are range checks and any
// bookkeeping across calls (the affinity mask a pin replaced lives in
// System/ThreadControls.swift). Test-only hooks live in the test target
// Tests/CTestSupport, the bench's process measurements in the bench.
//===----------------------------------------------------------------------===//
#ifndef C_MONO_CLOCK_H
#define C_MONO_CLOCK_H

#ifdef __linux__

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma clang assume_nonnull begin

/// The kernel clocks CMonoClock knows. Values are Linux clock ids.
extern const clockid_t cmc_clock_monotonic;      // CLOCK_MONOTONIC: stops during suspend
extern const clockid_t cmc_clock_boottime;       // CLOCK_BOOTTIME: counts through suspend
extern const clockid_t cmc_clock_realtime;       // CLOCK_REALTIME: wall clock, can jump
extern const clockid_t cmc_clock_monotonic_raw;  // CLOCK_MONOTONIC_RAW: read only (no sleeping)

/// Nanoseconds per second, as the arithmetic below uses it.
#define CMC_NSEC_PER_SEC INT64_C(1000000000)

/// Reads `clock` in nanoseconds. Returns INT64_MIN if the clock cannot be read
/// (an unknown clock id); the clocks above never fail on Linux.
/// The corresponding C function is `clock_gettime(2)`.
static inline int64_t cmc_now_ns(clockid_t clock) {
    struct timespec ts;
    if (__builtin_expect(clock_gettime(clock, &ts) != 0, 0)) {
        return INT64_MIN;
    }
    return (int64_t)ts.tv_sec * CMC_NSEC_PER_SEC + (int64_t)ts.tv_nsec;
}

/// Whether a glibc mutex is taken now, read without a barrier (a hint for a
/// spin before trying it: the read moves no cache line to this core's
/// exclusive ownership, as a compare-and-swap would). No system call.
static inline int cmc_mutex_is_taken(pthread_mutex_t *mutex) {
    return __atomic_load_n(&mutex->__data.__lock, __ATOMIC_RELAXED) != 0;
}

/// The CPU's spin-wait hint: `pause` on x86-64, `yield` on arm64. No system call.
static inline void cmc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/// Busy-waits with the pause hint until `clock` reads at least `deadline_ns`.
/// Returns the time read at exit (never less than `deadline_ns`), or INT64_MIN
/// if the clock cannot be read.
/// The corresponding C function is `clock_gettime(2)`, called in a loop.
static inline int64_t cmc_spin_until(clockid_t clock, int64_t deadline_ns) {
    for (;;) {
        int64_t now = cmc_now_ns(clock);
        if (now >= deadline_ns || now == INT64_MIN) {
            return now;
        }
        cmc_cpu_relax();
    }
}

/// Reads the resolution of `clock` in nanoseconds into `*out_ns`.
/// Returns 0 or an error number. The corresponding C function is `clock_getres(2)`.
int cmc_resolution_ns(clockid_t clock, int64_t *out_ns);

/// Sleeps until `clock` reaches `deadline_ns` (an absolute deadline), once.
/// Returns 0 at the deadline, or the error number `clock_nanosleep` returned:
/// EINTR when a signal handler ran (call again with the same deadline: an
/// absolute deadline does not drift), EINVAL for a negative deadline, ENOTSUP /
/// EINVAL for a clock the kernel cannot sleep on (CLOCK_MONOTONIC_RAW). It does
/// not set `errno`. The Swift layer retries EINTR (`Syscalls.swift`).
/// The corresponding C function is `clock_nanosleep(2)` with `TIMER_ABSTIME`.
int cmc_sleep_until(clockid_t clock, int64_t deadline_ns);

// MARK: - Instants as timespec

/// Splits nanoseconds into a normalised timespec (tv_nsec in [0, 1e9)), exactly
/// for every `ns`. No system call.
struct timespec cmc_timespec_from_ns(int64_t ns);
/// Joins a timespec into nanoseconds: exactly `tv_sec * 1e9 + tv_nsec` for any
/// `tv_sec` and any `tv_nsec` (negative, or 1e9 and above, is carried into the
/// seconds), saturating at INT64_MIN / INT64_MAX when that value does not fit.
/// Overflow-checked throughout: no input is undefined behaviour. No system call.
int64_t cmc_timespec_to_ns(struct timespec ts);

// MARK: - Thread controls

/// Reads the calling thread's timer slack in nanoseconds into `*out_ns`.
/// Returns 0 or an error number. The corresponding C function is `prctl(2)` with `PR_GET_TIMERSLACK`.
int cmc_timer_slack_get(uint64_t *out_ns);
/// Sets the calling thread's timer slack (0 restores the thread's default).
/// Returns 0 or an error number. The corresponding C function is `prctl(2)` with `PR_SET_TIMERSLACK`.
int cmc_timer_slack_set(uint64_t ns);

/// Switches the calling thread to SCHED_FIFO at `priority`. Returns 0 or the
/// error number `pthread_setschedparam` returned: EINVAL for a priority outside
/// `cmc_realtime_priority_min`…`cmc_realtime_priority_max` (the kernel checks
/// it), EPERM when not allowed.
/// The corresponding C function is `pthread_setschedparam(3)`.
int cmc_realtime_request(int priority);
/// Returns the calling thread to SCHED_OTHER. Returns 0 or an error number.
/// The corresponding C function is `pthread_setschedparam(3)`.
int cmc_realtime_drop(void);
/// Reads the calling thread's scheduling policy (SCHED_OTHER, SCHED_FIFO,
/// SCHED_RR, …) into `*out_policy`. Returns 0 or an error number.
/// The corresponding C function is `pthread_getschedparam(3)`.
int cmc_thread_sched_policy(int *out_policy);
/// Asks Linux's fair scheduler (EEVDF) for a time slice of `ns` for the
/// calling thread, keeping its policy and nice value: a thread whose slice is
/// shorter than the running thread's preempts it when it wakes. Linux 6.12 and
/// later honour it (clamped to 0.1–100 ms; no privilege needed); earlier
/// kernels accept and ignore it. Returns 0 or an error number: EINVAL for a
/// thread outside SCHED_OTHER and SCHED_BATCH, ENOSYS without the call.
/// The corresponding C function is `sched_setattr(2)` with `sched_runtime`.
int cmc_thread_slice_set(uint64_t ns);
/// Reads the calling thread's time slice in nanoseconds into `*out_ns`: what
/// the kernel reports as `sched_runtime` (0 where it keeps none, as before
/// Linux 6.12). Returns 0 or an error number.
/// The corresponding C function is `sched_getattr(2)`.
int cmc_thread_slice_get(uint64_t *out_ns);
/// The lowest SCHED_FIFO priority, or a negated error number.
/// The corresponding C function is `sched_get_priority_min(2)`.
int cmc_realtime_priority_min(void);
/// The highest SCHED_FIFO priority, or a negated error number.
/// The corresponding C function is `sched_get_priority_max(2)`.
int cmc_realtime_priority_max(void);

/// The number of CPU ids a `cpu_set_t` holds (`CPU_SETSIZE`, 1024 on Linux):
/// the affinity calls below read and set CPUs 0 ..< this.
extern const int cmc_cpu_set_size;
/// Sets the calling thread's affinity mask to the `count` CPUs at `cpus`.
/// Returns 0 or the error number `pthread_setaffinity_np` returned: EINVAL when
/// no CPU of the list is one the thread may run on (outside its cpuset, or
/// offline). A CPU outside 0 ..< `cmc_cpu_set_size` has no bit in the mask and is
/// left out, so a list of only such CPUs (or an empty one) is that EINVAL too.
/// It does not check the CPUs against the thread's current mask (the kernel does
/// not enforce a mask set by `taskset` or `sched_setaffinity`), and it keeps no
/// record of the mask it replaces: ThreadControls does both.
/// The corresponding C function is `pthread_setaffinity_np(3)`.
int cmc_affinity_set_cpus(const int *_Nullable cpus, int count);
/// Reads the calling thread's affinity mask: writes up to `capacity` CPU ids,
/// ascending, to `out_cpus` and returns how many there are (which may exceed
/// `capacity`), or a negated error number.
/// The corresponding C function is `pthread_getaffinity_np(3)`.
int cmc_affinity_get_cpus(int *out_cpus, int capacity);
/// The number of CPUs online (at least 1).
/// The corresponding C function is `sysconf(3)` with `_SC_NPROCESSORS_ONLN`.
int cmc_cpu_count(void);

/// Locks the process's current and future pages in memory. Returns 0 or an
/// error number. The corresponding C function is `mlockall(2)`.
int cmc_memory_lock(void);
/// Undoes cmc_memory_lock. Returns 0 or an error number. The corresponding C function is `munlockall(2)`.
int cmc_memory_unlock(void);

/// Names the calling thread (Linux keeps 15 bytes; longer names are cut).
/// Returns 0 or an error number. The corresponding C function is `pthread_setname_np(3)`.
int cmc_thread_set_name(const char *name);

/// The kernel thread id of the calling thread. The corresponding C function is `gettid(2)`.
int32_t cmc_thread_id(void);

// MARK: - futex: the timer engine's wake-up word

/// Atomically loads a futex word (acquire). No system call.
uint32_t cmc_futex_load(const uint32_t *word);
/// Atomically adds one to the word (release) and wakes every waiter on it.
/// The corresponding C function is `futex(2)` with `FUTEX_WAKE`.
void cmc_futex_bump_and_wake(uint32_t *word);
/// Waits while `*word == expected` until `clock` (CLOCK_MONOTONIC or
/// CLOCK_REALTIME) reaches `deadline_ns`; INT64_MAX waits without a deadline.
/// Returns 0 when woken, or the error number the kernel returned: EAGAIN when
/// the word no longer equalled `expected`, ETIMEDOUT at the deadline, EINTR on a
/// signal, EINVAL for another clock or a negative deadline. It neither retries
/// nor reinterprets them (the engine's `Doorbell` does).
/// Timer slack applies to the deadline, as for clock_nanosleep.
/// The corresponding C function is `futex(2)` with `FUTEX_WAIT_BITSET`.
int cmc_futex_wait_until(uint32_t *word, uint32_t expected, clockid_t clock, int64_t deadline_ns);

// MARK: - Wall-clock changes

/// Creates the timer that reports when CLOCK_REALTIME is set (clock_settime,
/// settimeofday, NTP steps; not gradual slewing): a timerfd on CLOCK_REALTIME,
/// non-blocking and close-on-exec. `cmc_clock_change_arm` makes it report.
/// Returns the file descriptor, or a negated error number.
/// The corresponding C function is `timerfd_create(2)`.
int cmc_clock_change_create(void);
/// Arms the timer far in the future (it never expires) with
/// TFD_TIMER_CANCEL_ON_SET, so that setting the clock cancels it; arming again
/// clears a cancellation. Returns 0 or an error number.
/// The corresponding C function is `timerfd_settime(2)`.
int cmc_clock_change_arm(int fd);
/// Waits up to `timeout_ms` (-1: no limit) for the timer to be readable.
/// Returns what `poll` returned: 1 when it is, 0 when the time ran out, or a
/// negated error number (EINTR on a signal).
/// The corresponding C function is `poll(2)`.
int cmc_clock_change_poll(int fd, int timeout_ms);
/// Reads the timer. Returns what `read` returned: the number of expirations, or
/// a negated error number: ECANCELED when the clock was set since the timer was
/// armed, EAGAIN when there is nothing to read (the descriptor does not block).
/// The corresponding C function is `read(2)`.
int64_t cmc_clock_change_read(int fd);
/// Closes the timer. Returns 0 or an error number (the descriptor is closed
/// either way on Linux). The corresponding C function is `close(2)`.
int cmc_clock_change_close(int fd);

// MARK: - Thread-local no-wait marker

/// The calling thread's no-wait marker (thread-local storage): the timer engine
/// sets it around each handler call, and for the whole life of a scheduler
/// thread, so that `cancel()` knows the calling thread must not wait for a
/// handler call to end. NULL on every other thread. No system call.
void *_Nullable cmc_current_no_wait_marker(void);
/// Sets the calling thread's no-wait marker; returns the previous one. No
/// system call.
void *_Nullable cmc_swap_no_wait_marker(void *_Nullable marker);
/// The scheduler whose thread this is (thread-local storage, set once by a
/// scheduler's thread): async code running on that thread sleeps on that
/// scheduler. NULL on every other thread. No system call.
void *_Nullable cmc_current_scheduler(void);
/// Sets the calling thread's scheduler (see `cmc_current_scheduler`).
void cmc_set_current_scheduler(void *_Nullable scheduler);

// MARK: - ThreadSanitizer annotations

/// Tells ThreadSanitizer that the calling thread acquired the lock at `addr`.
/// Does nothing unless CMonoClock is built with `--sanitize=thread`. The
/// standard `Synchronization.Mutex` locks through futex calls TSan cannot see,
/// so the Swift layer calls these around its critical sections. (They live in
/// the .c file: only it is compiled with the sanitizer's flags; a `static
/// inline` here would be compiled by Swift's importer, which never sees them.)
void cmc_tsan_acquire(const void *addr);
/// Tells ThreadSanitizer that the calling thread releases the lock at `addr`.
/// Does nothing unless CMonoClock is built with `--sanitize=thread`.
void cmc_tsan_release(const void *addr);

#pragma clang assume_nonnull end

#ifdef __cplusplus
}
#endif

#endif // __linux__
#endif // C_MONO_CLOCK_H
