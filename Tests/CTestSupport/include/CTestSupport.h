// Test-only helpers for PrecisionTimerTests: calls Swift cannot make directly
// (`tgkill` is not exported by the Glibc module; `syscall` is variadic; the
// capability structs come from <linux/capability.h>). Nothing here is part of
// the library: test hooks stay out of CMonoClock's public header.
#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// Sends `sig` to thread `tid` of process `tgid`. Returns 0 or an error number.
/// The corresponding C function is `tgkill(2)`.
int ct_tgkill(int32_t tgid, int32_t tid, int sig);

/// CPU time (user + system) consumed so far by thread `tid` of this process,
/// in nanoseconds, or a negative error number. Reads the thread's CPU-time
/// clock (what `pthread_getcpuclockid` returns) built from its kernel id.
int64_t ct_thread_cpu_ns(int32_t tid);

/// Writes the kernel ids of this process's threads (/proc/self/task) into
/// `out` (at most `capacity`). Returns how many, or a negative error number.
int ct_list_tasks(int32_t *out, int capacity);

/// Copies the name of thread `tid` of this process (/proc/self/task/TID/comm,
/// without the newline) into `buffer`. Returns 0 or an error number.
int ct_task_name(int32_t tid, char *buffer, int capacity);

/// Drops the capability `cap` (for example CAP_SYS_NICE, 23) from the calling
/// thread's effective, permitted and inheritable sets; threads it creates
/// afterwards inherit the reduced sets. Capabilities are per thread on Linux:
/// the rest of the process keeps its own. Returns 0 or an error number.
/// FaultTests and ThreadControlsTests use it to have the kernel itself refuse
/// SCHED_FIFO (with RLIMIT_RTPRIO at 0).
/// The corresponding C functions are `capget(2)` and `capset(2)`.
int ct_thread_drop_capability(int cap);

/// The usable size of the heap chunk at `pointer` (glibc's
/// `malloc_usable_size`, which the Glibc module does not export): what an
/// object of that many bytes, or fewer, costs.
size_t ct_malloc_usable_size(void *pointer);

#endif
