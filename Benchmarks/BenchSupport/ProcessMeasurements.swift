//===----------------------------------------------------------------------===//
// What the bench measures about its own process: CPU time (process and calling
// thread) and context switches. These are the bench's, not the library's, so
// they live here rather than in CMonoClock; Glibc's clock_gettime and getrusage
// are callable from Swift as they are.
//===----------------------------------------------------------------------===//
import CMonoClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CPU time used by the whole process so far, in nanoseconds, or `Int64.min`
/// if it cannot be read. The corresponding C function is `clock_gettime(2)`
/// with `CLOCK_PROCESS_CPUTIME_ID`.
func processCPUNanoseconds() -> Int64 {
    cpuClockNanoseconds(CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time used by the calling thread so far, in nanoseconds, or `Int64.min`
/// if it cannot be read. The corresponding C function is `clock_gettime(2)`
/// with `CLOCK_THREAD_CPUTIME_ID`.
func threadCPUNanoseconds() -> Int64 {
    cpuClockNanoseconds(CLOCK_THREAD_CPUTIME_ID)
}

/// Voluntary plus involuntary context switches of the process so far, or -1 if
/// they cannot be read. The corresponding C function is `getrusage(2)` with
/// `RUSAGE_SELF`.
func processContextSwitches() -> Int64 {
    var usage = rusage()
    guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return -1 }
    return Int64(usage.ru_nvcsw) + Int64(usage.ru_nivcsw)
}

private func cpuClockNanoseconds(_ clock: clockid_t) -> Int64 {
    var ts = timespec()
    guard clock_gettime(clock, &ts) == 0 else { return .min }
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// `clock_nanosleep` to an absolute CLOCK_MONOTONIC deadline, called again with
/// the same deadline after a signal (the C wrapper returns EINTR as it is).
/// Returns 0 or the error number.
func sleepUntilRetrying(_ deadline: Int64) -> Int32 {
    var rc: Int32
    repeat {
        rc = cmc_sleep_until(cmc_clock_monotonic, deadline)
    } while rc == EINTR
    return rc
}
