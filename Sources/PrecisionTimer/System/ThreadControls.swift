import CMonoClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    /// above 2^31 − 1 ns (about 2.1 s) is clamped to it, so that code reading it
    /// through glibc's `prctl(PR_GET_TIMERSLACK)`, whose result is an `int`,
    /// reads it back whole (``timerSlack()`` reads any slack whole).
    /// - Throws: ``PrecisionTimerError/system(_:operation:)`` when the kernel
    ///   refuses (a seccomp filter that denies `prctl`);
    ///   ``PrecisionTimerError/invalidArgument(_:)`` for a negative slack.
    /// The corresponding C function is `prctl(2)` with `PR_SET_TIMERSLACK`.
    public static func setTimerSlack(_ slack: Duration) throws {
        let ns = Swift.min(try slack.checkedNotNegative("the timer slack").saturatingNanoseconds, Int64(Int32.max))
        try system_timer_slack_set(UInt64(ns)).get(operation: "prctl(PR_SET_TIMERSLACK)")
    }

    /// The valid SCHED_FIFO priorities on this system (1...99 on Linux).
    ///
    /// The kernel has no error path for these reads of SCHED_FIFO; were they
    /// refused, the range would be Linux's 1...99.
    /// The corresponding C functions are `sched_get_priority_min(2)` and
    /// `sched_get_priority_max(2)`.
    public static var realtimePriorityRange: ClosedRange<Int> {
        guard case .success(let lowest) = system_realtime_priority_min(),
              case .success(let highest) = system_realtime_priority_max(), lowest <= highest
        else { return 1...99 }
        return Int(lowest)...Int(highest)
    }

    /// Moves the calling thread to SCHED_FIFO at `priority`.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a priority outside
    ///   ``realtimePriorityRange`` (a range the system reports at run time, and
    ///   the same error ``TimerScheduler/init(options:logger:)`` throws for it);
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

    /// The calling thread's time slice under Linux's fair scheduler (EEVDF):
    /// the one set by ``setTimeSlice(_:)``, else the kernel's default. Nil where
    /// the kernel reports none (before Linux 6.12), or should the call be
    /// refused.
    /// The corresponding C function is `sched_getattr(2)`.
    public static func timeSlice() -> Duration? {
        guard case .success(let ns) = system_thread_slice_get(), ns > 0 else { return nil }
        return .nanoseconds(Int64(clamping: ns))
    }

    /// Asks Linux's fair scheduler (EEVDF) for a time slice of `slice` for the
    /// calling thread, keeping its policy and nice value. When a thread with a
    /// shorter slice than the one running on its CPU wakes, it preempts that
    /// thread instead of waiting for the end of its slice: a thread that
    /// sleeps until a deadline then runs briefly (a scheduler's) wants the
    /// shortest. No privilege is needed. Linux 6.12 and later honour it, clamped to
    /// 0.1–100 ms (see ``timeSlice()``); earlier kernels accept and ignore
    /// it. Sub-nanosecond parts round up; zero restores the kernel's default.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for a negative
    ///   slice; ``PrecisionTimerError/system(_:operation:)`` with `EINVAL` on
    ///   a realtime thread (the slice is the fair scheduler's), `ENOSYS` where
    ///   the call does not exist.
    /// The corresponding C function is `sched_setattr(2)` with `sched_runtime`.
    public static func setTimeSlice(_ slice: Duration) throws {
        let ns = try slice.checkedNotNegative("the time slice").saturatingNanoseconds
        try system_thread_slice_set(UInt64(ns)).get(operation: "sched_setattr")
    }

    /// Whether the calling thread runs under a realtime policy (SCHED_FIFO or
    /// SCHED_RR); false should the policy be unreadable.
    /// The corresponding C function is `pthread_getschedparam(3)`.
    public static var isRealtime: Bool {
        guard case .success(let policy) = system_thread_sched_policy() else { return false }
        return policy == SCHED_FIFO || policy == SCHED_RR
    }

    /// The CPUs the calling thread may be pinned to, ascending: its affinity mask
    /// as it was before ``pin(toCPU:)`` (while pinned), or its current mask. A
    /// thread inherits its mask from the thread that created it, so this is the
    /// set `taskset`, a cpuset or `sched_setaffinity` allowed, not every online
    /// CPU. (Should the mask be unreadable, which happens only when the kernel
    /// supports more than 1024 CPUs, it is every online CPU.)
    /// The corresponding C function is `pthread_getaffinity_np(3)`.
    public static var allowedCPUs: [Int] {
        guard case .success(let cpus) = allowedCPUList(), !cpus.isEmpty else {
            return Array(0..<Int(cmc_cpu_count()))
        }
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
        try pinRecordingMask(toCPU: cpu).get(operation: "pthread_setaffinity_np")
    }

    /// Undoes ``pin(toCPU:)``: restores the affinity mask the calling thread had
    /// before it was first pinned (the one it inherited, as `taskset` or a cpuset
    /// set it), never a wider one such as every online CPU. On a thread that is
    /// not pinned it does nothing. Pinning again before unpinning moves the pin;
    /// one unpin then restores the mask from before the first pin. A mask changed
    /// by other means while pinned is overwritten by that saved one.
    /// The corresponding C function is `pthread_setaffinity_np(3)`.
    public static func unpin() throws {
        try restoreRecordedMask().get(operation: "pthread_setaffinity_np")
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

// MARK: - The mask a pin replaced

extension ThreadControls {
    /// Pins the calling thread to `cpu`. Its first pin since it was last unpinned
    /// records the mask from before it (``UnpinnedMask``), for
    /// ``restoreRecordedMask()``; a later pin only moves the pin. It does not
    /// check `cpu` against ``allowedCPUs`` (``pin(toCPU:)`` does, and
    /// ``TimerScheduler/init(options:logger:)`` does for its thread's CPU).
    ///
    /// - Returns: `EINVAL` for a CPU outside 0 ..< `CPU_SETSIZE`, with no call
    ///   made; else the error of reading the mask, recording it or pinning. On
    ///   failure the thread keeps its mask and its record.
    static func pinRecordingMask(toCPU cpu: Int) -> Result<Void, PrecisionTimerError.Errno> {
        guard cpu >= 0 && cpu < Int(cmc_cpu_set_size) else { return .failure(.invalidArgument) }
        let pin = { withUnsafePointer(to: Int32(cpu)) { system_affinity_set_cpus($0, 1) } }
        if UnpinnedMask.current != nil { return pin() }
        let before: [Int32]
        switch currentMask() {
        case .success(let mask): before = mask
        case .failure(let errno): return .failure(errno)
        }
        if case .failure(let errno) = UnpinnedMask.record(before) { return .failure(errno) }
        let pinned = pin()
        if case .failure = pinned { _ = UnpinnedMask.record(nil) }
        return pinned
    }

    /// Undoes ``pinRecordingMask(toCPU:)``: sets the recorded mask back and
    /// forgets it. On a thread that is not pinned it does nothing.
    ///
    /// - Returns: the error of setting the mask; the thread then stays pinned,
    ///   its record kept.
    static func restoreRecordedMask() -> Result<Void, PrecisionTimerError.Errno> {
        guard let before = UnpinnedMask.current else { return .success(()) }  // the mask it had
        return before.withUnsafeBufferPointer { system_affinity_set_cpus($0.baseAddress, Int32($0.count)) }
            .map { _ = UnpinnedMask.record(nil) }
    }

    /// The CPUs the calling thread may be pinned to: the recorded mask while it
    /// is pinned, else its current mask.
    static func allowedCPUList() -> Result<[Int32], PrecisionTimerError.Errno> {
        if let before = UnpinnedMask.current { return .success(before) }
        return currentMask()
    }

    /// The calling thread's affinity mask, ascending.
    static func currentMask() -> Result<[Int32], PrecisionTimerError.Errno> {
        let capacity = Int(cmc_cpu_set_size)  // every id a mask can hold
        var failure: PrecisionTimerError.Errno?
        let cpus = [Int32](unsafeUninitializedCapacity: capacity) { buffer, count in
            switch system_affinity_get_cpus(buffer.baseAddress!, Int32(capacity)) {
            case .success(let n): count = Swift.min(Int(n), capacity)
            case .failure(let errno): (failure, count) = (errno, 0)
            }
        }
        if let failure { return .failure(failure) }
        return .success(cpus)
    }

    /// The calling thread's affinity mask from before its first pin (the one it
    /// inherited from its creator, as `taskset`, a cpuset or `sched_setaffinity`
    /// set it), kept until ``ThreadControls/unpin()`` restores it; nil while the
    /// thread is not pinned. Per thread, as affinity is: a POSIX thread-specific
    /// value, released when its thread ends.
    enum UnpinnedMask {
        private final class Box {
            let cpus: [Int32]
            init(_ cpus: [Int32]) { self.cpus = cpus }
        }

        /// The slot, made on first use. Should the process have no slot left
        /// (`EAGAIN`), no mask can be recorded: a first pin then fails with it.
        private static let key = system_thread_key_create { value in
            if let value { Unmanaged<Box>.fromOpaque(value).release() }
        }

        /// The calling thread's record.
        static var current: [Int32]? {
            guard case .success(let key) = key, let value = pthread_getspecific(key) else { return nil }
            return Unmanaged<Box>.fromOpaque(value).takeUnretainedValue().cpus
        }

        /// Replaces the calling thread's record with `cpus` (nil: none).
        /// - Returns: the error of making the slot or storing the value; the
        ///   record is then unchanged. Clearing a record never fails: the slot
        ///   holds a value already.
        static func record(_ cpus: [Int32]?) -> Result<Void, PrecisionTimerError.Errno> {
            let key: pthread_key_t
            switch self.key {
            case .success(let made): key = made
            case .failure(let errno): return cpus == nil ? .success(()) : .failure(errno)
            }
            let old = pthread_getspecific(key)
            let new = cpus.map { Unmanaged.passRetained(Box($0)).toOpaque() }
            switch system_thread_set_specific(key, new) {
            case .success:
                if let old { Unmanaged<Box>.fromOpaque(old).release() }
                return .success(())
            case .failure(let errno):
                if let new { Unmanaged<Box>.fromOpaque(new).release() }
                return .failure(errno)
            }
        }
    }
}
