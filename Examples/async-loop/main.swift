// A fixed-rate async loop: a method of an actor whose executor is a dedicated
// TimerScheduler wakes at 1 kHz on an absolute grid (start + k × 1 ms) for a
// few seconds, then prints how late its wakes were (percentiles) and how many
// were early (there must be none). Every `await clock.sleep(until:)` is a timer
// of the actor's scheduler, and the actor resumes on that scheduler's thread.
//
//     swift run -c release async-loop [--seconds N]
#if canImport(Glibc)
import Glibc
#endif
import PrecisionTimer

actor Loop {
    let scheduler: TimerScheduler  // the actor's executor: keep it (the executor reference is unowned)
    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

    init() throws {
        scheduler = try TimerScheduler(options: .init(name: "async-loop"))
    }

    /// `cycles` wakes, every `period` on an absolute grid: each wake's lateness,
    /// and how many woke before their deadline.
    func run(every period: Duration, cycles: Int) async throws -> (lateness: [Duration], early: Int) {
        let clock = PrecisionClock.monotonic
        var lateness: [Duration] = []
        lateness.reserveCapacity(cycles)
        var early = 0
        var deadline = clock.now
        for _ in 0..<cycles {
            deadline += period  // the grid, not `clock.now + period`: no drift
            try await clock.sleep(until: deadline)
            let late = clock.now - deadline
            if late < .zero { early += 1 }
            lateness.append(late)
        }
        return (lateness, early)
    }
}

/// `--seconds N` (or `--seconds=N`), a positive whole number; 2 by default.
func secondsArgument() -> Int? {
    var arguments = CommandLine.arguments.dropFirst()
    var seconds = 2
    while let argument = arguments.popFirst() {
        let value: String?
        if argument == "--seconds" {
            value = arguments.popFirst()
        } else if argument.hasPrefix("--seconds=") {
            value = String(argument.dropFirst("--seconds=".count))
        } else {
            return nil
        }
        guard let value, let n = Int(value), n > 0 else { return nil }
        seconds = n
    }
    return seconds
}

/// The nearest-rank `q` quantile of `sorted` (not empty).
func percentile(_ sorted: [Duration], _ q: Double) -> Duration {
    let rank = Int((q * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

guard let seconds = secondsArgument() else {
    print("usage: async-loop [--seconds N]   (N a positive whole number; default 2)")
    exit(2)
}
let rate = 1_000
let loop = try Loop()
print("async-loop: \(rate) Hz for \(seconds) s, an actor on a TimerScheduler of its own")
let (lateness, early) = try await loop.run(every: .seconds(1) / rate, cycles: rate * seconds)
let sorted = lateness.sorted()
let statistics = loop.scheduler.statistics
// A deadline already past when the loop reaches it returns without a timer.
print("wakes \(sorted.count), of which timer fires \(statistics.fires)")
print("lateness  p50 \(percentile(sorted, 0.50).readable)  p90 \(percentile(sorted, 0.90).readable)"
      + "  p99 \(percentile(sorted, 0.99).readable)  max \(sorted[sorted.count - 1].readable)")
print("early wakes \(early)")
if early > 0 { exit(1) }
