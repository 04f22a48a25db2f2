import CMonoClock
import Foundation
@testable import PrecisionTimer
import TestSupport
import XCTest

/// The syscall layer's error policy (System/Syscalls.swift), stated once: which
/// calls retry EINTR, and what the futex wait's error numbers mean.
final class SyscallsTests: XCTestCase {
    func testNothingOrErrnoRetriesEINTROnlyWhenAsked() {
        var results: [Int32] = [EINTR, EINTR, 0]
        var calls = 0
        let retried = nothingOrErrno(retryOnInterrupt: true) {
            calls += 1
            return results.removeFirst()
        }
        XCTAssertNoThrow(try retried.get())
        XCTAssertEqual(calls, 3)

        results = [EINTR, 0]
        calls = 0
        let once = nothingOrErrno(retryOnInterrupt: false) {
            calls += 1
            return results.removeFirst()
        }
        XCTAssertEqual(calls, 1)
        XCTAssertThrowsError(try once.get()) { XCTAssertEqual($0 as? PrecisionTimerError.Errno, .interrupted) }
        XCTAssertThrowsError(try nothingOrErrno(retryOnInterrupt: true) { EPERM }.get(operation: "op")) { error in
            XCTAssertEqual(error as? PrecisionTimerError, .system(.notPermitted, operation: "op"))
        }
    }

    func testValueOrErrnoReadsNegatedErrorNumbers() {
        var results: [Int32] = [-EINTR, 5]
        XCTAssertEqual(try valueOrErrno(retryOnInterrupt: true) { results.removeFirst() }.get(), 5)
        XCTAssertThrowsError(try valueOrErrno(retryOnInterrupt: true) { -EPERM }.get()) {
            XCTAssertEqual($0 as? PrecisionTimerError.Errno, .notPermitted)
        }
    }

    func testDoorbellReadsAChangedWordAsAWakeUpAndAPastDeadlineAsATimeout() {
        let word = Doorbell()
        // The kernel's EAGAIN (the word no longer equals `expected`) is 0.
        XCTAssertEqual(word.wait(expecting: word.value &+ 1, clock: cmc_clock_monotonic, deadline: .max), 0)
        // A negative deadline (the kernel's EINVAL) has passed: ETIMEDOUT at once.
        XCTAssertEqual(word.wait(expecting: word.value, clock: cmc_clock_monotonic, deadline: -1), ETIMEDOUT)
        XCTAssertEqual(word.wait(expecting: word.value, clock: cmc_clock_realtime, deadline: .min), ETIMEDOUT)
    }

    func testValueOrErrnoTakesTheWrappersWidth() {
        XCTAssertEqual(try valueOrErrno(retryOnInterrupt: false) { Int64(1) << 40 }.get(), 1 << 40)
        XCTAssertThrowsError(try valueOrErrno(retryOnInterrupt: false) { -Int64(ECANCELED) }.get()) {
            XCTAssertEqual($0 as? PrecisionTimerError.Errno, PrecisionTimerError.Errno(rawValue: ECANCELED))
        }
    }

    /// The wall-clock notifier: ECANCELED from the read is the clock being set
    /// (then it is re-armed), EINTR and EAGAIN mean "wait again", an expiry is
    /// nothing to report, poll's 0 is the timeout, anything else breaks it.
    func testWallClockNotifierResultsMeanWhatTheWatcherSays() {
        typealias Errno = PrecisionTimerError.Errno
        func notice(
            polled: Result<Int32, Errno>, read: Result<Int64, Errno> = .success(1),
            rearm: Result<Void, Errno> = .success(())
        ) -> (WallClockWatcher.Notice, calls: [String]) {
            var calls: [String] = []
            let seen = WallClockWatcher.notice(
                polled: polled,
                read: { calls.append("read"); return read },
                rearm: { calls.append("rearm"); return rearm })
            return (seen, calls)
        }
        let canceled = Errno(rawValue: ECANCELED)
        let again = Errno(rawValue: EAGAIN)

        XCTAssertTrue(notice(polled: .success(1), read: .failure(canceled)) == (.clockSet, ["read", "rearm"]))
        XCTAssertTrue(notice(polled: .success(1), read: .failure(canceled), rearm: .failure(.invalidArgument))
                      == (.failed(.invalidArgument), ["read", "rearm"]))
        XCTAssertTrue(notice(polled: .success(1), read: .success(1)) == (.nothing, ["read"]))
        XCTAssertTrue(notice(polled: .success(1), read: .failure(again)) == (.nothing, ["read"]))
        XCTAssertTrue(notice(polled: .success(1), read: .failure(.interrupted)) == (.nothing, ["read"]))
        XCTAssertTrue(notice(polled: .success(1), read: .failure(Errno(rawValue: EBADF)))
                      == (.failed(Errno(rawValue: EBADF)), ["read"]))
        XCTAssertTrue(notice(polled: .success(0)) == (.timedOut, []))
        XCTAssertTrue(notice(polled: .failure(.interrupted)) == (.nothing, []))
        XCTAssertTrue(notice(polled: .failure(.invalidArgument)) == (.failed(.invalidArgument), []))
    }

    /// A sleep interrupted by signal handlers is retried with the same absolute
    /// deadline: the wait neither throws nor returns early.
    func testASleepInterruptedBySignalsIsRetriedWithTheSameDeadline() throws {
        // No SA_RESTART: the kernel returns EINTR to the sleeper.
        let previous = installSignalHandler(SIGUSR1, restart: false) { _ in }
        XCTAssertNotNil(previous)
        defer { previous?.restore() }

        let sleeper = LockedValue<pthread_t?>(nil)
        let result = LockedValue<Result<WaitResult, PrecisionTimerError>?>(nil)
        let clock = PrecisionClock.monotonic
        let deadline = clock.now + .milliseconds(300)
        let thread = Thread {
            sleeper.withLock { $0 = pthread_self() }
            let outcome = Result { () throws(PrecisionTimerError) -> WaitResult in
                do {
                    return try clock.wait(until: deadline, strategy: .sleep)
                } catch let error as PrecisionTimerError {
                    throw error
                } catch {
                    throw .invalidArgument("unexpected \(error)")
                }
            }
            result.withLock { $0 = outcome }
        }
        thread.start()
        XCTAssertTrue(waitUntil { sleeper.withLock { $0 } != nil })
        usleep(20_000)
        let target = try XCTUnwrap(sleeper.withLock { $0 })
        var sent = 0
        while result.withLock({ $0 }) == nil && sent < 20 {
            if pthread_kill(target, SIGUSR1) == 0 { sent += 1 }
            usleep(5_000)
        }
        XCTAssertTrue(waitUntil { result.withLock { $0 } != nil })
        let waited = try XCTUnwrap(result.withLock { $0 }).get()
        XCTAssertGreaterThan(sent, 0)
        XCTAssertGreaterThanOrEqual(waited.woke, deadline, "a signal must not end the wait early")
    }
}
