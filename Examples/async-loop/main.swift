// A fixed-rate async loop: a method of an actor whose executor is a dedicated
// TimerScheduler wakes at 1 kHz on an absolute grid (start + k × 1 ms) for a
// few seconds, then prints how late its wakes were (percentiles) and how many
// were early (there must be none). Every `await clock.sleep(until:)` is a timer
// of the actor's scheduler, and the actor resumes on that scheduler's thread.
//
//     swift run -c release async-loop [seconds]
//     swift run -c release async-loop --seconds 10 | tee loop.log
//
// It behaves as a command-line tool should: stdout is line-buffered (each line
// reaches a pipe as it is printed), and Ctrl-C (SIGINT) or SIGTERM cancels the
// loop, which then prints the summary of the wakes so far. The exit status is 0,
// or 1 when a wake came early.

// Glibc declares stdout and stderr as mutable globals, which Swift 6 rejects
// unless the module is imported @preconcurrency (first, before any other import).
@preconcurrency import Glibc
import Dispatch
import ExampleSupport
import PrecisionTimer
import Synchronization

let usage = """
    usage: async-loop [seconds]
           async-loop [--seconds N]

    Wakes at 1 kHz on an absolute grid for the given whole seconds (default 2),
    in an actor on a TimerScheduler of its own, then prints the lateness of its
    wakes. Ctrl-C (SIGINT) or SIGTERM stops it early, with the summary.
    """

actor Loop {
    let scheduler: TimerScheduler  // the actor's executor: keep it (the executor reference is unowned)
    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

    init() throws {
        scheduler = try TimerScheduler(options: .init(name: "async-loop"))
    }

    /// `cycles` wakes, every `period` on an absolute grid, or fewer when the
    /// task is cancelled: each wake's lateness, and how many woke before their
    /// deadline.
    func run(every period: Duration, cycles: Int) async throws -> (lateness: [Duration], early: Int) {
        let clock = PrecisionClock.monotonic
        var lateness: [Duration] = []
        lateness.reserveCapacity(cycles)
        var early = 0
        var deadline = clock.now
        for _ in 0..<cycles {
            deadline += period  // the grid, not `clock.now + period`: no drift
            do {
                try await clock.sleep(until: deadline)
            } catch is CancellationError {
                break  // stopped: what was measured so far is the result
            }
            let late = clock.now - deadline
            if late < .zero { early += 1 }
            lateness.append(late)
        }
        return (lateness, early)
    }
}

let command = ExampleCommand(program: "async-loop", usage: usage)


/// The nearest-rank `q` quantile of `sorted` (not empty).
func percentile(_ sorted: [Duration], _ q: Double) -> Duration {
    let rank = Int((q * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

setvbuf(stdout, nil, _IOLBF, 0)
let seconds = command.wholeNumbers([.init("seconds", default: 2, maximum: Int(Int32.max) / 1_000)])[0]
let rate = 1_000
let period = Duration.seconds(1) / rate

// A stop signal cancels the loop's task; the loop returns what it measured.
let stopSignal = Atomic<Int32>(0)
let loop = try Loop()
print("async-loop: \(rate) Hz for \(seconds) s, an actor on a TimerScheduler of its own")
let clock = PrecisionClock.monotonic
let started = clock.now
let work = Task { try await loop.run(every: period, cycles: rate * seconds) }
let signalSources = onStopSignal { signal in
    stopSignal.store(signal, ordering: .relaxed)
    work.cancel()
}
let (lateness, early) = try await work.value
let ran = clock.now - started
withExtendedLifetime(signalSources) {}

let signal = stopSignal.load(ordering: .relaxed)
let how = signal == 0 ? "ran" : "stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM") after"
// A deadline already past when the loop reaches it returns without a timer.
print("summary: \(how) \(ran.readable), \(lateness.count) wakes, of which timer fires \(loop.scheduler.statistics.fires)")
let sorted = lateness.sorted()
if let worst = sorted.last {
    print("lateness  p50 \(percentile(sorted, 0.50).readable)  p90 \(percentile(sorted, 0.90).readable)"
          + "  p99 \(percentile(sorted, 0.99).readable)  max \(worst.readable)")
    // A wake a period or more late finds the next deadline past already.
    let missed = sorted.count - (sorted.firstIndex { $0 >= period } ?? sorted.count)
    print("missed \(missed) (woke a period or more late)")
}
print("early wakes \(early)")
if early > 0 { exit(1) }
