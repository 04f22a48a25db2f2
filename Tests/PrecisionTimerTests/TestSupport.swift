import CMonoClock
import CTestSupport
@testable import PrecisionTimer
import Foundation
import Synchronization
import TestSupport
import XCTest

/// A thread-safe log of what handlers saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])  // Mutex that ThreadSanitizer sees

    func append(_ element: Element) {
        items.withLock { $0.append(element) }
    }

    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

final class DeinitFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// An object that raises a flag when it dies.
final class Owner: Sendable {
    let flag: DeinitFlag
    let ticks = Recorder<Int>()
    init(flag: DeinitFlag) { self.flag = flag }
    deinit { flag.set() }
}

extension Duration {
    var ns: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }
}

/// A scheduler on a fresh ``VirtualClock``, and the clock: time moves only when
/// the test advances it.
func makeScheduler() -> (TimerScheduler, VirtualClock) {
    let clock = VirtualClock()
    return (TimerScheduler(clock: clock), clock)
}

/// Runs `body` on a new thread; returns its result, or nil if it did not finish
/// within `timeout` seconds (the thread is then left behind, stuck).
func runOffTheTestThread<T: Sendable>(timeout: Double, _ body: @escaping @Sendable () -> T) -> T? {
    let result = LockedValue<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + timeout) == .success else { return nil }
    return result.withLock { $0 }
}

/// Polls `condition` every millisecond until it holds (true) or `timeout`
/// passes (false): for real-thread tests, whose bounds are generous on purpose.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let end = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > end { return false }
        usleep(1_000)
    }
    return true
}

/// Runs `operation`, failing and returning nil instead of hanging when it has
/// not finished within `limit` of real time (it is then cancelled). What it
/// throws is rethrown; a closure that throws nothing needs no `try`.
func withWatchdog<T: Sendable, E: Error>(_ limit: Duration = .seconds(10),
                                         file: StaticString = #filePath, line: UInt = #line,
                                         _ operation: @escaping @Sendable () async throws(E) -> T)
    async throws(E) -> T?
{
    let outcome = await withTaskGroup(of: Result<T, E>?.self) { group in
        group.addTask {
            do throws(E) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    guard let outcome else {
        XCTFail("timed out (hung)", file: file, line: line)
        return nil
    }
    return try outcome.get()
}

/// Cancels `task` and asserts that it ends by throwing `CancellationError`.
func assertCancelThrowsCancellationError<Success: Sendable>(_ task: Task<Success, any Error>,
                                                            file: StaticString = #filePath,
                                                            line: UInt = #line) async {
    task.cancel()
    let result = await task.result
    XCTAssertThrowsError(try result.get(), file: file, line: line) {
        XCTAssertTrue($0 is CancellationError, "\($0)", file: file, line: line)
    }
}

/// Asserts what must hold exactly for a skip-policy timer's ticks on a real
/// thread: never early, each on its grid (`start + index × interval`), and every
/// grid tick either fired or reported missed. Returns the index after the last.
@discardableResult
func assertSkipTicksOnGrid(_ ticks: [Tick], start: PrecisionClock.Instant, interval: Duration,
                           file: StaticString = #filePath, line: UInt = #line) -> Int {
    var expectedNext = 0
    for tick in ticks {
        XCTAssertGreaterThanOrEqual(tick.firedAt, tick.deadline, "early fire", file: file, line: line)
        XCTAssertEqual(tick.deadline, start + interval * tick.index, "off the grid", file: file, line: line)
        XCTAssertEqual(tick.index, expectedNext + tick.missed, "a tick was lost: missed must count the skipped ticks",
                       file: file, line: line)
        expectedNext = tick.index + 1
    }
    return expectedNext
}

/// Runs `body` on a new thread that the kernel itself refuses SCHED_FIFO (no
/// injected error): the thread drops CAP_SYS_NICE (capabilities are per thread;
/// threads it creates inherit the reduced set) while RLIMIT_RTPRIO is 0, so
/// `pthread_setschedparam` fails with EPERM. Throws `XCTSkip` where the
/// capability cannot be dropped.
func withRealtimeRefusedByTheKernel<R: Sendable>(_ body: @escaping @Sendable () -> R) throws -> R {
    var limit = rlimit()
    let resource = __rlimit_resource_t(__RLIMIT_RTPRIO.rawValue)
    XCTAssertEqual(getrlimit(resource, &limit), 0)
    let saved = limit
    limit.rlim_cur = 0
    XCTAssertEqual(setrlimit(resource, &limit), 0)
    defer {
        var restore = saved
        setrlimit(resource, &restore)
    }
    let outcome = LockedValue<(dropped: Int32, result: R?)?>(nil)
    let thread = Thread {
        let rc = ct_thread_drop_capability(23)  // CAP_SYS_NICE
        outcome.withLock { $0 = (rc, rc == 0 ? body() : nil) }
    }
    thread.start()
    XCTAssertTrue(waitUntil { outcome.withLock { $0 } != nil })
    let (dropped, result) = try XCTUnwrap(outcome.withLock { $0 })
    if dropped != 0 {
        throw XCTSkip("capset refused here (\(PrecisionTimerError.Errno(rawValue: dropped))): cannot drop CAP_SYS_NICE")
    }
    return try XCTUnwrap(result)
}

/// How long a run that is off by default lasts: the seconds in the environment
/// variable `variable`, or an `XCTSkip` that says how to ask for `what`.
func secondsToRun(_ what: String, from variable: String,
                  file: StaticString = #filePath, line: UInt = #line) throws -> Double {
    guard let seconds = ProcessInfo.processInfo.environment[variable].flatMap(Double.init), seconds > 0 else {
        throw XCTSkip("set \(variable)=N to run \(what) for N seconds", file: file, line: line)
    }
    return seconds
}

/// A run's seed: the one in the environment variable `variable` (to replay a
/// run), or a fresh random one.
func seedToRun(from variable: String) -> UInt64 {
    ProcessInfo.processInfo.environment[variable].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
}

/// A small seeded generator so a failing run can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A scheduler whose thread spins at least the last `margin` before each
/// zero-leeway deadline, so that a test knows when the thread is spinning.
func spinningScheduler(name: String, spinsLast margin: Duration) throws -> TimerScheduler {
    var options = TimerScheduler.Options(name: name)
    options.minimumSpinMargin = margin.saturatingNanoseconds
    return try TimerScheduler(options: options)
}

/// A cancel of a task from a thread of its own, at an instant of
/// CLOCK_MONOTONIC (spun to, not slept to), started at once: the tests of
/// cancels that race a deadline.
final class TimedCancel: Sendable {
    private let readings = Mutex<(issued: PrecisionClock.Instant, returned: PrecisionClock.Instant)?>(nil)

    init<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, at instant: PrecisionClock.Instant) {
        let thread = Thread { [self] in
            while PrecisionClock.monotonic.now < instant { cmc_cpu_relax() }
            let issued = PrecisionClock.monotonic.now
            task.cancel()
            let returned = PrecisionClock.monotonic.now
            readings.withLock { $0 = (issued, returned) }
        }
        thread.start()
    }

    /// When the cancel was issued (read just before `cancel()`) and when
    /// `cancel()` returned; waits for them.
    func times() async throws -> (issued: PrecisionClock.Instant, returned: PrecisionClock.Instant) {
        while true {
            if let times = readings.withLock({ $0 }) { return times }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
