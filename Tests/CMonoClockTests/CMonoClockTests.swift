import CMonoClock
import Foundation
import TestSupport
import XCTest

final class CMonoClockTests: XCTestCase {
    func testClocksReadAndMonotonicClocksDoNotGoBack() {
        for clock in [cmc_clock_monotonic, cmc_clock_boottime, cmc_clock_realtime, cmc_clock_monotonic_raw] {
            let a = cmc_now_ns(clock)
            let b = cmc_now_ns(clock)
            XCTAssertGreaterThan(a, 0)
            if clock != cmc_clock_realtime {
                XCTAssertGreaterThanOrEqual(b, a)
            }
        }
        // An unknown clock id cannot be read: the documented INT64_MIN.
        XCTAssertEqual(cmc_now_ns(12345), Int64.min)
    }

    func testResolution() {
        var ns: Int64 = 0
        XCTAssertEqual(cmc_resolution_ns(cmc_clock_monotonic, &ns), 0)
        XCTAssertEqual(ns, 1)
        XCTAssertEqual(cmc_resolution_ns(12345, &ns), EINVAL)
    }

    func testSleepUntilNeverReturnsEarly() {
        for _ in 0..<20 {
            let deadline = cmc_now_ns(cmc_clock_monotonic) + 300_000
            XCTAssertEqual(cmc_sleep_until(cmc_clock_monotonic, deadline), 0)
            XCTAssertGreaterThanOrEqual(cmc_now_ns(cmc_clock_monotonic), deadline)
        }
        // A deadline in the past returns at once.
        XCTAssertEqual(cmc_sleep_until(cmc_clock_monotonic, 1), 0)
    }

    func testSleepOnUnsupportedClockReturnsTheErrorNumber() {
        let deadline = cmc_now_ns(cmc_clock_monotonic_raw) + 1_000_000
        let rc = cmc_sleep_until(cmc_clock_monotonic_raw, deadline)
        XCTAssertTrue(rc == EINVAL || rc == ENOTSUP || rc == EOPNOTSUPP, "got \(rc)")
        XCTAssertEqual(cmc_sleep_until(cmc_clock_monotonic, -5), EINVAL)
    }

    /// The C wrapper does not retry: a signal handler ends the sleep with EINTR,
    /// and calling again with the same absolute deadline (what the Swift layer's
    /// `system_sleep_until` does) still ends at the deadline, never before.
    func testSleepInterruptedBySignalReturnsEINTRAndTheSameDeadlineHolds() throws {
        // No SA_RESTART: the kernel returns EINTR to the sleeper.
        let previous = installSignalHandler(SIGUSR1, restart: false) { _ in }
        XCTAssertNotNil(previous)
        defer { previous?.restore() }

        let sleeper = LockedValue<pthread_t?>(nil)
        let result = LockedValue<(rc: Int32, woke: Int64, interrupted: Int)?>(nil)
        let deadline = cmc_now_ns(cmc_clock_monotonic) + 300_000_000
        let thread = Thread {
            sleeper.withLock { $0 = pthread_self() }
            var interrupted = 0
            var rc: Int32
            while true {
                rc = cmc_sleep_until(cmc_clock_monotonic, deadline)
                guard rc == EINTR else { break }
                interrupted += 1
            }
            let woke = cmc_now_ns(cmc_clock_monotonic)
            result.withLock { $0 = (rc, woke, interrupted) }
        }
        thread.start()
        while sleeper.withLock({ $0 }) == nil { usleep(1000) }
        usleep(20_000)
        let target = sleeper.withLock { $0! }
        var sent = 0
        while result.withLock({ $0 }) == nil && sent < 20 {
            if pthread_kill(target, SIGUSR1) == 0 { sent += 1 }
            usleep(5_000)
        }
        while result.withLock({ $0 }) == nil { usleep(1000) }
        let (rc, woke, interrupted) = try XCTUnwrap(result.withLock { $0 })
        XCTAssertEqual(rc, 0)
        XCTAssertGreaterThanOrEqual(woke, deadline, "the same deadline again must not end the sleep early")
        XCTAssertGreaterThan(sent, 0)
        XCTAssertGreaterThan(interrupted, 0, "the wrapper returned EINTR instead of retrying")
    }

    func testSpinUntilReturnsTheTimeReadAtExit() {
        let deadline = cmc_now_ns(cmc_clock_monotonic) + 50_000
        let exit = cmc_spin_until(cmc_clock_monotonic, deadline)
        XCTAssertGreaterThanOrEqual(exit, deadline)
        XCTAssertLessThanOrEqual(exit, cmc_now_ns(cmc_clock_monotonic))
        // Spinning works on the raw clock, which cannot be slept on.
        let rawDeadline = cmc_now_ns(cmc_clock_monotonic_raw) + 10_000
        XCTAssertGreaterThanOrEqual(cmc_spin_until(cmc_clock_monotonic_raw, rawDeadline), rawDeadline)
    }

    func testTimespecConversions() {
        let a = cmc_timespec_from_ns(1_700_000_000)
        XCTAssertEqual(a.tv_sec, 1)
        XCTAssertEqual(a.tv_nsec, 700_000_000)
        let b = cmc_timespec_from_ns(-1)  // normalised: tv_nsec stays in [0, 1e9)
        XCTAssertEqual(b.tv_sec, -1)
        XCTAssertEqual(b.tv_nsec, 999_999_999)
        XCTAssertEqual(cmc_timespec_to_ns(a), 1_700_000_000)
        XCTAssertEqual(cmc_timespec_to_ns(b), -1)
        XCTAssertEqual(cmc_timespec_to_ns(cmc_timespec_from_ns(Int64.max)), Int64.max)
        XCTAssertEqual(cmc_timespec_to_ns(cmc_timespec_from_ns(Int64.min)), Int64.min)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: Int.max, tv_nsec: 0)), Int64.max)
        XCTAssertEqual(cmc_timespec_to_ns(timespec(tv_sec: 1, tv_nsec: 1_500_000_000)), 2_500_000_000)
    }

    func testTimerSlackRoundTrip() {
        var original: UInt64 = 0
        XCTAssertEqual(cmc_timer_slack_get(&original), 0)
        XCTAssertGreaterThan(original, 0)
        XCTAssertEqual(cmc_timer_slack_set(1234), 0)
        var now: UInt64 = 0
        XCTAssertEqual(cmc_timer_slack_get(&now), 0)
        XCTAssertEqual(now, 1234)
        XCTAssertEqual(cmc_timer_slack_set(original), 0)
    }

    /// The wrapper checks no range: a priority outside 1...99 is the kernel's own
    /// EINVAL. (A refusal for want of privilege is tried in FaultTests and
    /// ThreadControlsTests, from a thread without CAP_SYS_NICE.)
    func testRealtimeRequestOutOfRangeIsTheKernelsEINVAL() {
        XCTAssertEqual(cmc_realtime_priority_min(), 1)
        XCTAssertEqual(cmc_realtime_priority_max(), 99)
        XCTAssertEqual(cmc_realtime_request(0), EINVAL)
        XCTAssertEqual(cmc_realtime_request(100), EINVAL)
        XCTAssertEqual(cmc_realtime_request(-1), EINVAL)
        var policy: Int32 = -1
        XCTAssertEqual(cmc_thread_sched_policy(&policy), 0)
        XCTAssertEqual(policy, SCHED_OTHER)
    }

    /// The affinity wrappers read and set the mask and keep no record of it: a
    /// list of CPUs the set cannot hold is empty, the kernel's EINVAL.
    func testAffinityGetAndSetAreOneCallEach() throws {
        let capacity = Int(cmc_cpu_set_size)
        XCTAssertEqual(capacity, 1024)
        var before = [Int32](repeating: -1, count: capacity)
        let count = cmc_affinity_get_cpus(&before, Int32(capacity))
        XCTAssertGreaterThanOrEqual(count, 1)
        before = Array(before.prefix(Int(count)))
        defer { XCTAssertEqual(cmc_affinity_set_cpus(before, Int32(before.count)), 0, "restore \(before)") }

        for outside: Int32 in [-1, 1024, .max] {
            var cpu = outside
            XCTAssertEqual(cmc_affinity_set_cpus(&cpu, 1), EINVAL, "CPU \(outside)")
        }
        XCTAssertEqual(cmc_affinity_set_cpus(nil, 0), EINVAL, "an empty mask")
        var first = before[0]
        XCTAssertEqual(cmc_affinity_set_cpus(&first, 1), 0)
        var now = [Int32](repeating: -1, count: 4)
        XCTAssertEqual(cmc_affinity_get_cpus(&now, 4), 1)
        XCTAssertEqual(now[0], first)
        // A capacity smaller than the mask: the count is still the whole mask's.
        XCTAssertEqual(cmc_affinity_set_cpus(before, Int32(before.count)), 0)
        XCTAssertEqual(cmc_affinity_get_cpus(&now, 0), count)
    }

    func testCPUCountAndMemoryLockReturnErrorNumbers() {
        XCTAssertGreaterThanOrEqual(cmc_cpu_count(), 1)
        let rc = cmc_memory_lock()
        XCTAssertTrue(rc == 0 || rc == ENOMEM || rc == EPERM, "got \(rc)")
        if rc == 0 { XCTAssertEqual(cmc_memory_unlock(), 0) }
    }

    /// The wall-clock notifier's wrappers return what poll, read and close
    /// returned, untranslated (WallClockWatcher says what it means).
    func testClockChangeWrappersReturnWhatTheCallReturned() throws {
        let fd = cmc_clock_change_create()
        XCTAssertGreaterThanOrEqual(fd, 0, "timerfd_create: \(-fd)")
        guard fd >= 0 else { return }
        // Not armed: nothing to read.
        XCTAssertEqual(cmc_clock_change_poll(fd, 0), 0)
        XCTAssertEqual(cmc_clock_change_read(fd), -Int64(EAGAIN))
        XCTAssertEqual(cmc_clock_change_arm(fd), 0)
        XCTAssertEqual(cmc_clock_change_poll(fd, 20), 0, "armed far out: no expiry")
        XCTAssertEqual(cmc_clock_change_read(fd), -Int64(EAGAIN))
        XCTAssertEqual(cmc_clock_change_close(fd), 0)
        // No descriptor: each call's own answer.
        XCTAssertEqual(cmc_clock_change_arm(-1), EBADF)
        XCTAssertEqual(cmc_clock_change_read(-1), -Int64(EBADF))
        XCTAssertEqual(cmc_clock_change_close(-1), EBADF)
        XCTAssertEqual(cmc_clock_change_poll(-1, 0), 0, "poll skips a negative descriptor")
    }

    func testFutexWaitTimesOutNeverEarlyAndWakes() {
        let word = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        word.initialize(to: 7)
        defer { word.deallocate() }
        let deadline = cmc_now_ns(cmc_clock_monotonic) + 2_000_000
        XCTAssertEqual(cmc_futex_wait_until(word, 7, cmc_clock_monotonic, deadline), ETIMEDOUT)
        XCTAssertGreaterThanOrEqual(cmc_now_ns(cmc_clock_monotonic), deadline)
        // A changed word returns at once with the kernel's EAGAIN (the doorbell
        // rang before the wait; Doorbell reads it as a wake-up).
        XCTAssertEqual(cmc_futex_wait_until(word, 6, cmc_clock_monotonic, Int64.max), EAGAIN)
        XCTAssertEqual(cmc_futex_wait_until(word, 7, cmc_clock_boottime, deadline), EINVAL)
        // A negative deadline is the kernel's EINVAL (Doorbell clamps it to 0).
        XCTAssertEqual(cmc_futex_wait_until(word, 7, cmc_clock_monotonic, -1), EINVAL)
        XCTAssertEqual(cmc_futex_wait_until(word, 7, cmc_clock_monotonic, 0), ETIMEDOUT)
        cmc_futex_bump_and_wake(word)
        XCTAssertEqual(cmc_futex_load(word), 8)
    }
}
