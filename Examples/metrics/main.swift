// A scheduler under load, watched through swift-metrics: a 1 kHz control loop
// with no leeway, a 10 ms housekeeping timer with 2 ms of leeway, and an
// overloaded handler every 50 ms whose every fourth call computes for 3 to 7 ms,
// holding up the other two (they share its thread). SchedulerMetrics exports the
// scheduler's statistics once a second into a Prometheus registry; the program
// prints a line a second from the statistics, and every few seconds, and at the
// end, the registry's exposition text (the `precisiontimer_` metrics): the long
// handler calls show in the handler-duration buckets, and the time the others
// waited for them in the lateness tail and the missed ticks.
//
//     swift run --traits Metrics metrics [seconds]
//     swift run --traits Metrics metrics --seconds 30 | tee metrics.log
//
// PrecisionTimerMetrics needs the package trait `Metrics`; built without it,
// the program says so and exits with status 2.
//
// It behaves as a command-line tool should: stdout is line-buffered (each line
// reaches a pipe as it is printed), colour only goes to a terminal and never
// when NO_COLOR is set (https://no-color.org: a non-empty value), and Ctrl-C
// (SIGINT) or SIGTERM ends the run early with the final export and exposition,
// exit status 0.

// Glibc declares stdout and stderr as mutable globals, which Swift 6 rejects
// unless the module is imported @preconcurrency (first, before any other import).
@preconcurrency import Glibc
#if Metrics
import Dispatch
import ExampleSupport
import Metrics
import PrecisionTimer
import PrecisionTimerMetrics
import Prometheus
import Synchronization

let usage = """
    usage: metrics [seconds]
           metrics [--seconds N]

    Runs three timers on a TimerScheduler of its own for the given whole seconds
    (default 10): a 1 kHz control loop, a 10 ms timer with leeway, and a handler
    that sometimes takes several milliseconds. Exports the scheduler's statistics
    to a Prometheus registry once a second and prints its exposition text every
    3 seconds and at the end. Ctrl-C (SIGINT) or SIGTERM stops it early.
    Colour only on a terminal, and not when NO_COLOR is set.
    """

let command = ExampleCommand(program: "metrics", usage: usage)


/// Keeps the calling thread busy for `duration`: the CPU work of a handler that
/// computes (it must not block, but it may be slow).
func compute(for duration: Duration) {
    let clock = PrecisionClock.monotonic
    let end = clock.now + duration
    while clock.now < end {}
}

/// The Prometheus exposition text of the `precisiontimer_` metrics, one block
/// per metric (its `# TYPE` line first) in the order of `order`, so that each
/// print lists them alike (the registry's own order is a dictionary's).
func exposition(_ registry: PrometheusCollectorRegistry, order: [String]) -> [String] {
    var blocks: [String: [String]] = [:]
    var current = ""
    for line in registry.emitToString().split(separator: "\n").map(String.init) {
        if line.hasPrefix("# TYPE ") {
            current = String(line.dropFirst("# TYPE ".count).prefix { $0 != " " })
        }
        guard current.hasPrefix("precisiontimer_") else { continue }
        blocks[current, default: []].append(line)
    }
    let rank = { (name: String) in order.firstIndex(of: name) ?? order.count }
    return blocks.keys.sorted { (rank($0), $0) < (rank($1), $1) }.flatMap { blocks[$0]! }
}

setvbuf(stdout, nil, _IOLBF, 0)
let seconds = command.wholeNumbers([.init("seconds", default: 10, maximum: Int(Int32.max))])[0]
let (bold, red, yellow, reset) = printsColour ? ("\u{1B}[1m", "\u{1B}[31m", "\u{1B}[33m", "\u{1B}[0m") : ("", "", "", "")

// The Prometheus registry behind swift-metrics. A Timer's default buckets
// (5 ms to 10 s) cannot tell a microsecond from a millisecond: these
// from 1 µs to 10 ms can.
typealias Label = SchedulerMetrics.Label
let registry = PrometheusCollectorRegistry()
var factory = PrometheusMetricsFactory(registry: registry)
let buckets: [Duration] = [.microseconds(1), .microseconds(10), .microseconds(50), .microseconds(100),
                           .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
                           .milliseconds(10)]
for label in [Label.fireLateness, Label.handlerDuration, Label.jobDuration] {
    factory.durationHistogramBuckets[label] = buckets
}
MetricsSystem.bootstrap(factory)

let scheduler = try TimerScheduler(options: .init(name: "demo"))
let metrics = SchedulerMetrics(scheduler: scheduler)  // scheduler="demo", MetricsSystem.factory
let exporter = Task { try await metrics.run(every: .seconds(1)) }

let controlCycles = Atomic<Int>(0)
let control = scheduler.repeating(every: .milliseconds(1)) { _ in
    controlCycles.add(1, ordering: .relaxed)
}
let housekeeping = scheduler.repeating(every: .milliseconds(10), leeway: .milliseconds(2)) { _ in
    compute(for: .microseconds(20))
}
let overloadedCalls = Atomic<Int>(0)
let overloaded = scheduler.repeating(every: .milliseconds(50)) { _ in
    let call = overloadedCalls.add(1, ordering: .relaxed).newValue
    // Every fourth call takes 3, 5 or 7 ms; the others 50 µs.
    compute(for: call % 4 == 0 ? .milliseconds(3 + 2 * (call / 4 % 3)) : .microseconds(50))
}

print("\(bold)metrics\(reset): \(seconds) s on scheduler \"demo\": 1 kHz control loop, 10 ms housekeeping "
      + "(2 ms leeway), a 50 ms handler taking 3–7 ms every fourth call; exported every second")

/// One line from the statistics so far: fires, missed ticks, lateness and
/// the longest handler call (the worst lateness in red beyond 1 ms).
func statusLine(second: Int) -> String {
    let s = scheduler.statistics
    let late = s.lateness.summary
    let tint = late.max > .milliseconds(1) ? red : (late.max > .microseconds(100) ? yellow : "")
    return "\(String(repeating: " ", count: max(0, 3 - String(second).count)))\(second) s  fires \(s.fires)"
        + "  missed \(s.missedTicks)  lateness p50 \(late.p50.readable)  p99 \(late.p99.readable)"
        + "  \(tint)max \(late.max.readable)\(reset)  longest handler \(s.handlerTime.max.readable)"
}

let order = [Label.fireLateness, Label.handlerDuration, Label.jobDuration, Label.fires, Label.missedTicks,
             Label.wakeups, Label.jobs, Label.spinNanoseconds, Label.wallClockChanges, Label.liveTimers]
func printExposition(_ title: String) {
    print("\(bold)--- \(title): Prometheus exposition, precisiontimer_ metrics ---\(reset)")
    for line in exposition(registry, order: order) { print(line) }
}

// The run: a line a second, the exposition every `every` seconds. A stop
// signal cancels it.
let every = 3
let clock = ContinuousClock()
let started = clock.now
let run = Task {
    for second in 1...seconds {
        do {
            try await clock.sleep(until: started + .seconds(second), tolerance: nil)
        } catch {
            return  // stopped
        }
        print(statusLine(second: second))
        // After the exporter's export for this second (it runs on the same grid).
        if second % every == 0 && second < seconds {
            try? await Task.sleep(for: .milliseconds(50))
            printExposition("after \(second) s")
        }
    }
}
let stopSignal = Atomic<Int32>(0)
let signalSources = onStopSignal { signal in
    stopSignal.store(signal, ordering: .relaxed)
    run.cancel()
}
await run.value
withExtendedLifetime(signalSources) {}

for timer in [control, housekeeping, overloaded] { timer.cancel() }
exporter.cancel()
try await exporter.value  // the final export
let signal = stopSignal.load(ordering: .relaxed)
let how = signal == 0 ? "ran" : "stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM") after"
printExposition("at the end")
print("summary: \(how) \((clock.now - started).readable), \(controlCycles.load(ordering: .relaxed)) control cycles, "
      + "\(overloadedCalls.load(ordering: .relaxed)) overloaded calls")
#else
#if canImport(Glibc)
import Glibc
#endif
fputs("metrics: PrecisionTimerMetrics needs the package trait Metrics: swift run --traits Metrics metrics\n", stderr)
exit(2)
#endif
