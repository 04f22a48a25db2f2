//===----------------------------------------------------------------------===//
// CMonoClock: the parts Swift cannot call directly. Each wrapper makes its
// call and returns what it returned (0 or the error number, or a value or a
// negated error number), and keeps no state; the policy for those numbers
// (EINTR retried, EAGAIN meaning "the word had changed", ECANCELED meaning "the
// wall clock was set") is the Swift layer's, in
// Sources/PrecisionTimer/System/Syscalls.swift and the types it names.
//===----------------------------------------------------------------------===//
#ifdef __linux__

// _GNU_SOURCE lives here, not in the header: defining it in a header Swift
// imports conflicts with other modules' view of the C library.
#define _GNU_SOURCE 1

#include "CMonoClock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#if __has_include(<bsd/sys/time.h>)
#include <bsd/sys/time.h>
#else
#error "CMonoClock needs libbsd's <bsd/sys/time.h>: install it with `apt-get install -y libbsd-dev`"
#endif

const clockid_t cmc_clock_monotonic = CLOCK_MONOTONIC;
const clockid_t cmc_clock_boottime = CLOCK_BOOTTIME;
const clockid_t cmc_clock_realtime = CLOCK_REALTIME;
const clockid_t cmc_clock_monotonic_raw = CLOCK_MONOTONIC_RAW;

// MARK: - Instants as timespec

struct timespec cmc_timespec_from_ns(int64_t ns) {
    // A split, not arithmetic on two timespecs: libbsd has nothing for it.
    struct timespec ts;
    int64_t sec = ns / CMC_NSEC_PER_SEC;
    int64_t rem = ns % CMC_NSEC_PER_SEC;
    if (rem < 0) {  // normalise: tv_nsec is always in [0, 1e9)
        rem += CMC_NSEC_PER_SEC;
        sec -= 1;
    }
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)rem;
    return ts;
}

// The Int64 nanosecond range as normalised timespecs: INT64_MAX is
// 9223372036 s + 854775807 ns, INT64_MIN is -9223372037 s + 145224192 ns.
static const struct timespec cmc_ns_range_max = {
    .tv_sec = (time_t)(INT64_MAX / CMC_NSEC_PER_SEC),
    .tv_nsec = (long)(INT64_MAX % CMC_NSEC_PER_SEC),
};
static const struct timespec cmc_ns_range_min = {
    .tv_sec = (time_t)(INT64_MIN / CMC_NSEC_PER_SEC - 1),
    .tv_nsec = (long)(INT64_MIN % CMC_NSEC_PER_SEC + CMC_NSEC_PER_SEC),
};

int64_t cmc_timespec_to_ns(struct timespec ts) {
    // The exact value tv_sec * 1e9 + tv_nsec, saturated at INT64_MIN / INT64_MAX,
    // for any tv_sec and tv_nsec (tv_nsec need not be in [0, 1e9)).
    //
    // 1. Normalise: carry whole seconds out of tv_nsec (floor division), so
    //    nsec is in [0, 1e9). libbsd's timespecadd cannot normalise here: it
    //    carries tv_nsec once, upward only, and its tv_sec++ overflows (undefined
    //    behaviour) at tv_sec = TIME_MAX. The quotient fits; only the sum can
    //    overflow, and then |sec| >= 2^63 seconds, far outside the range.
    int64_t carry = (int64_t)ts.tv_nsec / CMC_NSEC_PER_SEC;
    int64_t nsec = (int64_t)ts.tv_nsec % CMC_NSEC_PER_SEC;
    if (nsec < 0) {
        nsec += CMC_NSEC_PER_SEC;
        carry -= 1;
    }
    int64_t sec;
    if (__builtin_add_overflow((int64_t)ts.tv_sec, carry, &sec)) {
        return carry < 0 ? INT64_MIN : INT64_MAX;
    }
    // 2. Saturate outside the range: a comparison of normalised timespecs,
    //    libbsd's timespeccmp.
    const struct timespec normal = {.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
    if (timespeccmp(&normal, &cmc_ns_range_max, >)) {
        return INT64_MAX;
    }
    if (timespeccmp(&normal, &cmc_ns_range_min, <)) {
        return INT64_MIN;
    }
    // 3. Join. In range, only the lowest second's product (-9223372037 s) does
    //    not fit on its own: for a negative sec, join (sec + 1) s and
    //    (nsec - 1e9) ns, so the product and the sum both stay in range.
    if (sec < 0 && nsec > 0) {
        sec += 1;
        nsec -= CMC_NSEC_PER_SEC;
    }
    return sec * CMC_NSEC_PER_SEC + nsec;
}

// MARK: - Clocks

int cmc_resolution_ns(clockid_t clock, int64_t *out_ns) {
    struct timespec ts;
    if (clock_getres(clock, &ts) != 0) {
        return errno;
    }
    *out_ns = cmc_timespec_to_ns(ts);
    return 0;
}

int cmc_sleep_until(clockid_t clock, int64_t deadline_ns) {
    const struct timespec deadline = cmc_timespec_from_ns(deadline_ns);
    // clock_nanosleep returns the error number; it does not set errno. A
    // negative deadline is the kernel's EINVAL.
    return clock_nanosleep(clock, TIMER_ABSTIME, &deadline, NULL);
}

// MARK: - Thread controls

int cmc_timer_slack_get(uint64_t *out_ns) {
    // The raw system call, not glibc's prctl(), whose `int` result would cut a
    // slack of 2^31 ns or more (set by other code) down to a negative number that
    // reads as a failure. The kernel has no error path for PR_GET_TIMERSLACK: only
    // a seccomp filter that denies prctl can make this fail.
    long rc = syscall(SYS_prctl, PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L);
    if (rc == -1) {
        return errno;
    }
    *out_ns = (uint64_t)(unsigned long)rc;
    return 0;
}

int cmc_timer_slack_set(uint64_t ns) {
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0) != 0) {
        return errno;
    }
    return 0;
}

int cmc_realtime_priority_min(void) {
    int priority = sched_get_priority_min(SCHED_FIFO);
    return priority >= 0 ? priority : -errno;
}

int cmc_realtime_priority_max(void) {
    int priority = sched_get_priority_max(SCHED_FIFO);
    return priority >= 0 ? priority : -errno;
}

int cmc_realtime_request(int priority) {
    // No range check here: the kernel answers a priority outside min…max with
    // EINVAL, and the Swift layer checks the range before it calls.
    struct sched_param param = {.sched_priority = priority};
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

int cmc_realtime_drop(void) {
    struct sched_param param = {.sched_priority = 0};
    return pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
}

int cmc_thread_sched_policy(int *out_policy) {
    struct sched_param param;
    return pthread_getschedparam(pthread_self(), out_policy, &param);
}

// The first version of the kernel's `struct sched_attr` (SCHED_ATTR_SIZE_VER0,
// 48 bytes), which glibc before 2.41 does not declare.
struct cmc_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

static int cmc_sched_attr_get(struct cmc_sched_attr *attr) {
#ifdef SYS_sched_getattr
    memset(attr, 0, sizeof *attr);
    if (syscall(SYS_sched_getattr, 0, attr, (unsigned int)sizeof *attr, 0U) != 0) {
        return errno;
    }
    return 0;
#else
    (void)attr;
    return ENOSYS;
#endif
}

int cmc_thread_slice_set(uint64_t ns) {
#ifdef SYS_sched_setattr
    struct cmc_sched_attr attr;
    int rc = cmc_sched_attr_get(&attr);
    if (rc != 0) {
        return rc;
    }
    if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) {
        return EINVAL;
    }
    // The policy and nice value as they are; only the slice changes.
    attr.size = sizeof attr;
    attr.sched_flags = 0;
    attr.sched_priority = 0;
    attr.sched_runtime = ns;
    attr.sched_deadline = 0;
    attr.sched_period = 0;
    if (syscall(SYS_sched_setattr, 0, &attr, 0U) != 0) {
        return errno;
    }
    return 0;
#else
    (void)ns;
    return ENOSYS;
#endif
}

int cmc_thread_slice_get(uint64_t *out_ns) {
    struct cmc_sched_attr attr;
    int rc = cmc_sched_attr_get(&attr);
    if (rc == 0) {
        *out_ns = attr.sched_runtime;
    }
    return rc;
}

int cmc_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

const int cmc_cpu_set_size = CPU_SETSIZE;

int cmc_affinity_set_cpus(const int *cpus, int count) {
    // Packing the list into a cpu_set_t is the one step besides the call.
    // CPU_SET ignores a CPU outside the set's bits (glibc and musl both check).
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) {
        CPU_SET(cpus[i], &set);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int cmc_affinity_get_cpus(int *out_cpus, int capacity) {
    cpu_set_t set;
    int rc = pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc != 0) {
        return -rc;
    }
    // Unpacking the cpu_set_t into a list is the one step besides the call.
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            if (count < capacity) {
                out_cpus[count] = cpu;
            }
            count++;
        }
    }
    return count;
}

int cmc_memory_lock(void) {
    return mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 0 : errno;
}

int cmc_memory_unlock(void) {
    return munlockall() == 0 ? 0 : errno;
}

int cmc_thread_set_name(const char *name) {
    char buffer[16];
    strncpy(buffer, name, sizeof(buffer) - 1);
    buffer[sizeof(buffer) - 1] = '\0';
    return pthread_setname_np(pthread_self(), buffer);
}

int32_t cmc_thread_id(void) {
    return (int32_t)syscall(SYS_gettid);
}

// MARK: - futex

uint32_t cmc_futex_load(const uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

void cmc_futex_bump_and_wake(uint32_t *word) {
    __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

int cmc_futex_wait_until(uint32_t *word, uint32_t expected, clockid_t clock, int64_t deadline_ns) {
    int op = FUTEX_WAIT_BITSET_PRIVATE;
    if (clock == CLOCK_REALTIME) {
        op |= FUTEX_CLOCK_REALTIME;
    } else if (clock != CLOCK_MONOTONIC) {
        return EINVAL;
    }
    struct timespec deadline;
    const struct timespec *timeout = NULL;
    if (deadline_ns != INT64_MAX) {
        deadline = cmc_timespec_from_ns(deadline_ns);
        timeout = &deadline;
    }
    return syscall(SYS_futex, word, op, expected, timeout, NULL, FUTEX_BITSET_MATCH_ANY) == 0 ? 0 : errno;
}

// MARK: - Wall-clock changes

int cmc_clock_change_create(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
    return fd >= 0 ? fd : -errno;
}

int cmc_clock_change_arm(int fd) {
    // Far in the future: it never expires, it only reports clock changes.
    struct itimerspec spec = {.it_interval = {0, 0}, .it_value = {(time_t)1 << 40, 0}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL) == 0 ? 0 : errno;
}

int cmc_clock_change_poll(int fd, int timeout_ms) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
    int n = poll(&pfd, 1, timeout_ms);
    return n >= 0 ? n : -errno;
}

int64_t cmc_clock_change_read(int fd) {
    uint64_t expirations = 0;
    ssize_t n = read(fd, &expirations, sizeof(expirations));
    return n >= 0 ? (int64_t)expirations : -(int64_t)errno;
}

int cmc_clock_change_close(int fd) {
    return close(fd) == 0 ? 0 : errno;
}

// MARK: - Thread-local marker

static _Thread_local void *cmc_marker = NULL;

void *cmc_current_no_wait_marker(void) { return cmc_marker; }

void *cmc_swap_no_wait_marker(void *marker) {
    void *previous = cmc_marker;
    cmc_marker = marker;
    return previous;
}

static _Thread_local void *cmc_scheduler = NULL;

void *cmc_current_scheduler(void) { return cmc_scheduler; }

void cmc_set_current_scheduler(void *scheduler) { cmc_scheduler = scheduler; }

#endif // __linux__

// MARK: - ThreadSanitizer annotations

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define CMC_THREAD_SANITIZER 1
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#  endif
#endif

void cmc_tsan_acquire(const void *addr) {
#ifdef CMC_THREAD_SANITIZER
    __tsan_acquire((void *)addr);
#else
    (void)addr;
#endif
}

void cmc_tsan_release(const void *addr) {
#ifdef CMC_THREAD_SANITIZER
    __tsan_release((void *)addr);
#else
    (void)addr;
#endif
}

