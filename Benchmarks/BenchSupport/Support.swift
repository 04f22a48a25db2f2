//===----------------------------------------------------------------------===//
// Shared plumbing: dedicated threads, a one-shot signal, pre-sized sample
// buffers and a black hole that defeats dead-code elimination.
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import Synchronization

/// CLOCK_MONOTONIC now, in nanoseconds (the clock every grid in this benchmark
/// lives on, and the one DispatchTime's uptime reads on Linux).
@inline(__always)
func monoNow() -> Int64 {
    cmc_now_ns(cmc_clock_monotonic)
}

/// Writes progress to stderr, so stdout stays the report.
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Keeps `value` observable so the optimizer cannot drop the work producing it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Runs `body` on a new, dedicated OS thread (not on the cooperative pool) and
/// resumes the awaiting task with its result once it returns.
func onDedicatedThread<T: Sendable>(
    name: String, _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = name
        thread.start()
    }
}

/// Runs `body(i)` for each `i` in `0 ..< count` on as many new threads, which
/// wait for each other behind a barrier and then start together; blocks the
/// calling thread until all have returned (the bench's watchdog stops a run
/// that hangs), and returns their results in order.
func onThreadsTogether<T: Sendable>(
    _ count: Int, name: String, _ body: @escaping @Sendable (Int) -> T
) -> [T] {
    let arrived = Atomic<Int>(0)
    let results = Mutex<[T?]>(Array(repeating: nil, count: count))
    let ended = (0..<count).map { _ in Latch() }
    for i in 0..<count {
        let thread = Thread {
            arrived.add(1, ordering: .acquiringAndReleasing)
            while arrived.load(ordering: .acquiring) < count { cmc_cpu_relax() }
            let result = body(i)
            results.withLock { $0[i] = result }
            ended[i].signal()
        }
        thread.name = "\(name)-\(i)"
        thread.start()
    }
    for latch in ended { _ = latch.waitBlocking(timeoutNs: 3_600_000_000_000) }
    return results.withLock { $0.map { $0! } }
}

/// A one-shot signal: `signal()` once from any thread, `wait()` from a task or,
/// with `waitBlocking()`, from a dedicated thread.
final class Latch: Sendable {
    private struct State {
        var signaled = false
        var continuation: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() {
        let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.signaled else { return nil }
            s.signaled = true
            let c = s.continuation
            s.continuation = nil
            return c
        }
        semaphore.signal()
        continuation?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.signaled { return true }
                s.continuation = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Blocks the calling thread until signalled or until `timeoutNs` passes.
    /// Returns false on timeout.
    func waitBlocking(timeoutNs: Int64) -> Bool {
        semaphore.wait(timeout: .now() + .nanoseconds(Int(timeoutNs))) == .success
    }
}

/// A fixed-capacity buffer of signed nanosecond samples, allocated once before
/// the measured loop. Written by one thread at a time (the hand-off between
/// writer and reader is ordered by a continuation, a queue or a lock).
final class SampleBuffer: @unchecked Sendable {
    let base: UnsafeMutablePointer<Int64>
    let capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
        base = .allocate(capacity: self.capacity)
        base.initialize(repeating: 0, count: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    @inline(__always)
    func append(_ value: Int64) {
        if count < capacity {
            base[count] = value
            count += 1
        }
    }

    func reset() {
        count = 0
    }

    var samples: UnsafeBufferPointer<Int64> {
        UnsafeBufferPointer(start: base, count: count)
    }
}

extension Duration {
    /// Whole nanoseconds (truncated), for lateness arithmetic on ContinuousClock.
    var benchNanoseconds: Int64 {
        let (s, a) = components
        return s &* 1_000_000_000 &+ a / 1_000_000_000
    }
}

/// CPU time (user + system) of this process's terminated, waited-for children.
func childrenCPUNs() -> Int64 {
    var usage = rusage()
    guard getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return 0 }
    func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1_000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// CPU-bound competitors for the load scenario: `count` threads at normal
/// priority, thread i pinned to core i mod cores, each spinning until `stop()`.
final class Hogs: Sendable, CustomStringConvertible {
    let count: Int
    private let running = Atomic<Bool>(true)
    private let stopped: [Latch]
    private let pinned = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
        stopped = (0..<count).map { _ in Latch() }
        let cores = Swift.max(1, Int(cmc_cpu_count()))
        for i in 0..<count {
            let thread = Thread { [self] in
                var cpu = Int32(i % cores)
                if cmc_affinity_set_cpus(&cpu, 1) == 0 { pinned.add(1, ordering: .relaxed) }
                var x: UInt64 = 0x9E37_79B9_7F4A_7C15
                while running.load(ordering: .relaxed) {
                    for _ in 0..<10_000 {
                        x ^= x << 13; x ^= x >> 7; x ^= x << 17
                    }
                }
                blackHole(x)
                stopped[i].signal()
            }
            thread.name = "bench-hog-\(i)"
            thread.start()
        }
    }

    /// Stops the hogs and waits (up to 5 s) for their threads to end. Idempotent.
    func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        for latch in stopped { _ = latch.waitBlocking(timeoutNs: 5_000_000_000) }
    }

    var description: String {
        "\(count) CPU-bound hog threads (busy loops at normal priority, "
            + "\(pinned.load(ordering: .relaxed) == count ? "one pinned to each core" : "not all pinned")) "
            + "ran during the rounds"
    }
}
