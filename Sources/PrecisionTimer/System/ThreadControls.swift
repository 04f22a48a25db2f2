import CMonoClock

/// Controls over how the calling thread is scheduled and woken: the kernel's
/// timer slack, realtime priority, CPU affinity and memory locking.
///
/// Each call affects the calling thread only (``lockMemory()`` the process). The
/// calls that change something throw ``PrecisionTimerError/system(_:operation:)``
/// when the kernel refuses; ``timerSlack()``, which cannot fail, does not throw.
public enum ThreadControls {
    /// The calling thread's timer slack: how late the kernel may make this thread's
    /// timed sleeps to coalesce wake-ups (50 µs by default for normal threads;
    /// ignored for realtime threads).
    ///
    /// It does not throw: the kernel has no error path for `PR_GET_TIMERSLACK`.
    /// Only a seccomp filter that denies `prctl` could make the call fail; it then
    /// reads as zero, which is never a real slack (the kernel keeps a thread's
    /// default in place of 0).
    /// The corresponding C function is `prctl(2)` with `PR_GET_TIMERSLACK`.
    public static func timerSlack() -> Duration {
        guard case .success(let ns) = system_timer_slack_get() else { return .zero }
        return .nanoseconds(Int64(clamping: ns))
    }

    /// Sets the calling thread's timer slack. Sub-nanosecond parts round up; zero
    /// restores the thread's default slack (the kernel's meaning of 0). A slack
    /// above 2^31 − 1 ns (about 2.1 s) is clamped to it: `PR_GET_TIMERSLACK`
    /// returns an `int`, so ``timerSlack()`` could not read a larger one back.
    /// - Throws: ``PrecisionTimerError/system(_:operation:)`` when the kernel
    ///   refuses (a seccomp filter that denies `prctl`);
    ///   ``PrecisionTimerError/invalidArgument(_:)`` for a negative slack.
    /// The corresponding C function is `prctl(2)` with `PR_SET_TIMERSLACK`.
    public static func setTimerSlack(_ slack: Duration) throws {
        let ns = Swift.min(try slack.checkedNotNegative("the timer slack").saturatingNanoseconds, Int64(Int32.max))
        try system_timer_slack_set(UInt64(ns)).get(operation: "prctl(PR_SET_TIMERSLACK)")
    }

    /// The valid SCHED_FIFO priorities on this system (1...99 on Linux).
    public static var realtimePriorityRange: ClosedRange<Int> {
        Int(cmc_realtime_priority_min())...Int(cmc_realtime_priority_max())
    }

    /// Moves the calling thread to SCHED_FIFO at `priority`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a priority outside
    ///   ``realtimePriorityRange`` (a range the system reports at run time, and
    ///   the same error ``TimerScheduler/init(options:)`` throws for it);
    ///   ``PrecisionTimerError/system(_:operation:)``
    ///   with `EPERM` when the process may not raise its priority (no
    ///   `CAP_SYS_NICE`, `RLIMIT_RTPRIO` too low, or a container that forbids it).
    /// The corresponding C function is `pthread_setschedparam(3)`.
    public static func requestRealtime(priority: Int) throws {
        guard realtimePriorityRange.contains(priority) else {
            throw PrecisionTimerError.invalidArgument(
                "realtime priority \(priority) is outside \(realtimePriorityRange)")
        }
        try system_realtime_request(Int32(priority)).get(operation: "pthread_setschedparam(SCHED_FIFO)")
    }

    /// Returns the calling thread to the normal scheduler (SCHED_OTHER); on a
    /// thread that is not realtime it does nothing.
    /// The corresponding C function is `pthread_setschedparam(3)`.
    public static func dropRealtime() throws {
        try system_realtime_drop().get(operation: "pthread_setschedparam(SCHED_OTHER)")
    }

    /// Whether the calling thread runs under a realtime policy.
    /// The corresponding C function is `pthread_getschedparam(3)`.
    public static var isRealtime: Bool { cmc_realtime_is_active() }

    /// The CPUs the calling thread may be pinned to, ascending: its affinity mask
    /// as it was before ``pin(toCPU:)`` (while pinned), or its current mask. A
    /// thread inherits its mask from the thread that created it, so this is the
    /// set `taskset`, a cpuset or `sched_setaffinity` allowed, not every online
    /// CPU. (Should the mask be unreadable, which happens only when the kernel
    /// supports more than 1024 CPUs, it is every online CPU.)
    /// The corresponding C function is `pthread_getaffinity_np(3)`.
    public static var allowedCPUs: [Int] {
        let capacity = 1024  // CPU_SETSIZE: the ids the mask can hold
        let cpus = [Int32](unsafeUninitializedCapacity: capacity) { buffer, count in
            let n = (try? system_affinity_allowed_cpus(buffer.baseAddress!, Int32(capacity)).get()) ?? 0
            count = Swift.max(0, Swift.min(Int(n), capacity))
        }
        guard !cpus.isEmpty else { return Array(0..<Int(cmc_cpu_count())) }
        return cpus.map(Int.init)
    }

    /// Throws unless the calling thread may be pinned to `cpu` (``allowedCPUs``).
    static func requireAllowedCPU(_ cpu: Int) throws {
        let allowed = allowedCPUs
        guard allowed.contains(cpu) else {
            throw PrecisionTimerError.invalidArgument(
                "CPU \(cpu) is not one this thread may use (its affinity mask allows \(allowed))")
        }
    }

    /// Pins the calling thread to `cpu`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a CPU outside
    ///   ``allowedCPUs`` (the thread's mask from before it was pinned: what
    ///   `taskset` or a cpuset allows), however many CPUs are online.
    /// The corresponding C function is `pthread_setaffinity_np(3)`.
    public static func pin(toCPU cpu: Int) throws {
        try requireAllowedCPU(cpu)
        try system_affinity_set_cpu(Int32(cpu)).get(operation: "pthread_setaffinity_np")
    }

    /// Undoes ``pin(toCPU:)``: restores the affinity mask the calling thread had
    /// before it was first pinned (the one it inherited, as `taskset` or a cpuset
    /// set it), never a wider one such as every online CPU. On a thread that is
    /// not pinned it does nothing. Pinning again before unpinning moves the pin;
    /// one unpin then restores the mask from before the first pin. A mask changed
    /// by other means while pinned is overwritten by that saved one.
    /// The corresponding C function is `pthread_setaffinity_np(3)`.
    public static func unpin() throws {
        try system_affinity_clear().get(operation: "pthread_setaffinity_np")
    }

    /// Locks the process's pages in memory so a page fault cannot delay a wake-up.
    /// The corresponding C function is `mlockall(2)` with `MCL_CURRENT | MCL_FUTURE`.
    public static func lockMemory() throws {
        try system_memory_lock().get(operation: "mlockall")
    }

    /// Undoes ``lockMemory()``; without a lock it does nothing. The corresponding
    /// C function is `munlockall(2)`.
    public static func unlockMemory() throws {
        try system_memory_unlock().get(operation: "munlockall")
    }
}
