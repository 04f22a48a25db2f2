import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// Real threads, real signals, everything at once.
///
/// Off by default. Run it with
///
///     PRECISIONTIMER_CHAOS_SECONDS=10 swift test --filter ChaosTests
///
/// (`PRECISIONTIMER_CHAOS_SEED` replays a run's random choices;
/// `PRECISIONTIMER_CHAOS_HANG_SECONDS` is how long an operation may block
/// before it counts as a hang, default 20; `PRECISIONTIMER_CHAOS_CPU_PERCENT`
/// is the idle thread's CPU budget, default 1).
///
/// For N seconds, concurrently:
/// - SIGUSR1 (SA_RESTART) and SIGUSR2 (no SA_RESTART) hit every thread of the
///   process at random moments (`tgkill` on each entry of /proc/self/task);
/// - two workers schedule, cancel, suspend, resume, fire and drop one-shots and
///   repeating timers on `chaos-main`;
/// - handlers release their own last handle (a repeating and a one-shot timer,
///   each on a scheduler of its own), and objects own one-shot / repeating
///   timers whose handlers capture them, so the owner's deinit (and the
///   handle's release) runs on the scheduler thread;
/// - tasks consume `ticks(every:)` and sleep (`scheduler.sleep(until:)`,
///   `PrecisionClock.sleep`; also in a task that prefers `chaos-exec` and in an
///   actor whose executor it is, so on its own thread), and are cancelled at
///   random moments;
/// - private schedulers (`chaos-pN`) are made, used (`fire()` then `cancel()`,
///   `suspend()` / `resume()`) and released; their threads must all be gone at
///   the end;
/// - a 1 ms timer started 3000 s ago (tick index ~3,000,000) gets
///   `setInterval(3600 s)` or `setNextDeadline(now + 3600 s)`: more than 3
///   fires in the 200 ms after the call returns is a storm;
/// - once, two schedulers whose only timer is 60 s away (signals unblocked /
///   default) take signals at 1 kHz at their thread for 1.5 s: each thread must
///   use at most 1 % of a core (25 % with signals unblocked: it runs their
///   handlers; a spin is 100 %), and a 10 ms one-shot scheduled meanwhile must
///   fire within 10 s.
///
/// Every operation that can block (cancel, release, task cancel + completion,
/// a heartbeat one-shot on each long-lived scheduler) is registered with a
/// watchdog, which names what is stuck (a hang) instead of letting the run
/// hang; the test waits for nothing without a timeout. Checked: no early fire
/// (the tick's `firedAt` and the clock read in the handler are at or after the
/// deadline), no lost one-shot or sleep, repeating indices strictly rise and
/// (skip policy) `missed` counts the gaps exactly, no storm, the CPU bound, no
/// leaked thread or capture. The last line printed is the summary:
///
///     chaos: S s, H hangs, E early, L lost, ... (seed X)
///
/// The counting signal handlers stay installed after the test (a signal still
/// pending on some thread must never meet the default action, which ends the
/// process).
final class ChaosTests: XCTestCase {
    func testChaos() throws {
        let env = ProcessInfo.processInfo.environment
        let seconds = try secondsToRun("the chaos test", from: "PRECISIONTIMER_CHAOS_SECONDS")
        let seed = seedToRun(from: "PRECISIONTIMER_CHAOS_SEED")
        let hangSeconds = env["PRECISIONTIMER_CHAOS_HANG_SECONDS"].flatMap(Double.init) ?? 20
        let cpuPercent = env["PRECISIONTIMER_CHAOS_CPU_PERCENT"].flatMap(Double.init) ?? 1
        let started = monoNow()

        installCountingSignalHandlers()
        // Warm up what spawns threads of its own (Dispatch, the task pool, the
        // shared scheduler) before anything is counted.
        DispatchQueue.global().sync {}
        let warm = DispatchSemaphore(value: 0)
        Task.detached { warm.signal() }
        warm.wait()
        _ = TimerScheduler.shared.statistics
        let privateBaseline = chaosThreads(prefix: "chaos-p").count

        let report = ChaosReport()
        let watchdog = Watchdog(report: report, limit: .nanoseconds(Int64(hangSeconds * 1e9)))
        let end = monoNow() + Int64(seconds * 1e9)
        let world = ChaosWorld(report: report, watchdog: watchdog, end: end)
        let watchdogStop = Atomic<Bool>(false)
        let watchdogThread = Thread {
            while !watchdogStop.load(ordering: .acquiring) {
                watchdog.scan()
                usleep(50_000)
            }
        }
        watchdogThread.start()

        func make(_ name: String, blocksSignals: Bool = false) throws -> TimerScheduler {
            var options = TimerScheduler.Options(name: name)
            options.blocksAsyncSignals = blocksSignals
            return try TimerScheduler(options: options)
        }
        // The long-lived schedulers, in a box the test empties at the end (the
        // workers take theirs out once, at their start).
        let sched = LockedValue<[String: TimerScheduler]>([:])
        for name in ["chaos-main", "chaos-own-r", "chaos-own-o", "chaos-own-c", "chaos-own-d", "chaos-tick",
                     "chaos-sleep", "chaos-exec", "chaos-storm", "chaos-rearm"] {
            let scheduler = try make(name, blocksSignals: name == "chaos-sleep")
            sched.withLock { $0[name] = scheduler }
        }
        @Sendable func s(_ name: String) -> TimerScheduler { sched.withLock { $0[name]! } }
        let workers = WorkerSet()
        var rng = SplitMix64(seed: seed)
        func nextSeed() -> UInt64 { rng.next() }

        workers.start("signals", seed: nextSeed()) { signalSender(world, &$0) }
        for i in 0..<2 {
            workers.start("ops-\(i)", seed: nextSeed()) { opsWorker(world, s("chaos-main"), id: i, &$0) }
        }
        workers.start("own", seed: nextSeed()) { rng in
            ownWorker(world, [s("chaos-own-r"), s("chaos-own-o"), s("chaos-own-c"), s("chaos-own-d")], &rng)
        }
        workers.start("ticks", seed: nextSeed()) { tickWorker(world, s("chaos-tick"), &$0) }
        workers.start("sleeps", seed: nextSeed()) { sleepWorker(world, s("chaos-sleep"), s("chaos-exec"), &$0) }
        workers.start("private", seed: nextSeed()) { privateWorker(world, &$0) }
        workers.start("storm", seed: nextSeed()) { stormWorker(world, s("chaos-storm"), &$0) }
        workers.start("rearm", seed: nextSeed()) { rearmWorker(world, s("chaos-rearm"), &$0) }
        workers.start("heartbeat", seed: nextSeed()) { _ in heartbeatWorker(world, sched.withLock { $0 }) }
        let cpuDelay = min(1.0, seconds / 4)
        workers.start("cpu", seed: nextSeed()) { _ in
            usleep(UInt32(cpuDelay * 1e6))
            cpuCheck(world, percentLimit: cpuPercent)
        }

        // Wait for the workers, never forever: a stuck one is named by the
        // watchdog (give it time to see the hang) and left behind.
        let giveUp = end + Int64((hangSeconds + 15) * 1e9)
        while !workers.running.isEmpty && monoNow() < giveUp { usleep(20_000) }
        watchdog.scan()
        let stuckWorkers = workers.running.sorted()
        if !stuckWorkers.isEmpty && report.count(.hang) == 0 {
            report.record(.hang, "workers never finished: \(stuckWorkers.joined(separator: ", ")) "
                          + "(open operations: \(watchdog.openOperations.joined(separator: "; ")))")
        }

        // Every sleep registered on chaos-exec's own thread resumed there.
        let elsewhere = s("chaos-exec").engine.sleepsResumedElsewhere.load(ordering: .relaxed)
        if elsewhere > 0 {
            report.record(.violation, "chaos-exec: \(elsewhere) sleeps on its thread resumed on another thread")
        }

        // Release the long-lived schedulers (never blocks: a scheduler's thread
        // ends by itself once it has no live timers), then every private
        // scheduler's thread must be gone; the others' are reported (stuck
        // workers may still hold theirs).
        sched.withLock { $0.removeAll() }
        var leftover: [String] = []
        var lingering: [String] = []
        let threadsGone = waitUntil(timeout: .seconds(10)) {
            leftover = chaosThreads(prefix: "chaos-p")
            lingering = chaosThreads(prefix: "chaos-").filter { !$0.hasPrefix("chaos-p") }
            return leftover.count <= privateBaseline && lingering.isEmpty
        }
        if !threadsGone && leftover.count > privateBaseline {
            report.record(.leak, "\(leftover.count - privateBaseline) private scheduler threads still alive 10 s "
                          + "after their schedulers were released: \(leftover.prefix(12).joined(separator: ", "))")
        }
        watchdog.scan()
        watchdogStop.store(true, ordering: .releasing)

        let elapsed = Double(monoNow() - started) / 1e9
        let counts = report.counts
        let stats = world.stats.withLock { $0 }
        let statText = stats.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("""
            chaos: \(seconds) s, \(counts[.hang, default: 0]) hangs, \(counts[.early, default: 0]) early, \
            \(counts[.lost, default: 0]) lost, \(counts[.storm, default: 0]) storms, \
            \(counts[.cpu, default: 0]) cpu, \(counts[.leak, default: 0]) leaks, \
            \(counts[.violation, default: 0]) violations; \
            signals handled \(chaosRestartingSignals.load(ordering: .relaxed)) restarting / \
            \(chaosInterruptingSignals.load(ordering: .relaxed)) interrupting; \(statText); \
            stuck workers [\(stuckWorkers.joined(separator: ", "))], lingering scheduler threads \
            [\(lingering.joined(separator: ", "))]; ran \(String(format: "%.1f", elapsed)) s (seed \(seed))
            """)
        for kind in ChaosReport.Kind.allCases where counts[kind, default: 0] > 0 {
            let messages = report.messages(kind)
            XCTFail("chaos \(kind.rawValue) ×\(counts[kind, default: 0]) (seed \(seed)):\n  - "
                    + messages.joined(separator: "\n  - "))
        }
    }
}
