// Test-only helpers for ChaosTests: calls Swift cannot make directly
// (`tgkill` is not exported by the Glibc module; `syscall` is variadic).
#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H

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

#endif
