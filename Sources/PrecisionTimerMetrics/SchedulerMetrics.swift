// The module's content needs the package trait `Metrics`, which brings in
// swift-metrics: `.package(url: …, from: …, traits: ["Metrics"])`. Without it
// the module is empty, and a package that uses only PrecisionTimer never
// resolves swift-metrics.
#if Metrics
import CoreMetrics
import PrecisionTimer
import Synchronization

/// Exports a `TimerScheduler`'s `TimerStatistics` through swift-metrics:
/// how late its timers fired, how long its handlers and jobs ran, and its
/// counts, as the metrics backend the program bootstrapped (Prometheus,
/// StatsD, OpenTelemetry…) shows them.
///
/// ```swift
/// let scheduler = try TimerScheduler(options: .init(name: "control"))
/// let metrics = SchedulerMetrics(scheduler: scheduler)  // dimension scheduler="control"
/// let exporter = Task { try await metrics.run(every: .seconds(1)) }
/// // …
/// exporter.cancel()  // exports once more, then ends
/// ```
///
/// Each ``export()`` adds what the scheduler recorded since the previous one:
/// counters are incremented by the difference of the counts, and every value
/// of each `LatencyHistogram` recorded in between is recorded into a
/// swift-metrics `Timer` (the highest value of its bucket, within 0.8 % of the
/// value, never above the largest value recorded), so the backend's own
/// histogram sees each fire once. The first export adds everything since the
/// scheduler was made or its statistics were last reset. After a
/// `TimerScheduler.resetStatistics()` the next export adds the figures
/// recorded since the reset; those recorded between the previous export and
/// the reset are not exported.
///
/// ## Metrics
///
/// Every metric has the dimension `scheduler` (the `name` given to
/// ``init(scheduler:name:factory:)``); those of one clock also have `clock`
/// (`monotonic`, `boottime` or `realtime`). The labels are Prometheus names;
/// ``Label`` holds them.
///
/// | Label | Kind | Dimensions | Value |
/// |---|---|---|---|
/// | `precisiontimer_fire_lateness_seconds` | `Timer` | scheduler, clock | each scheduled fire's `Tick.lateness` |
/// | `precisiontimer_fires_total` | `Counter` | scheduler, clock | handler calls |
/// | `precisiontimer_missed_ticks_total` | `Counter` | scheduler, clock | ticks that did not fire on their own |
/// | `precisiontimer_handler_duration_seconds` | `Timer` | scheduler | each inline handler call's run time |
/// | `precisiontimer_job_duration_seconds` | `Timer` | scheduler | each executor job's run time |
/// | `precisiontimer_wakeups_total` | `Counter` | scheduler | wake-ups of the scheduler's thread |
/// | `precisiontimer_jobs_total` | `Counter` | scheduler | Swift concurrency jobs run |
/// | `precisiontimer_spin_nanoseconds_total` | `Counter` | scheduler | CPU time spent spinning before deadlines |
/// | `precisiontimer_wall_clock_changes_total` | `Counter` | scheduler | times the system time was set under wall-clock timers |
/// | `precisiontimer_live_timers` | `Gauge` | scheduler | timers scheduled or suspended at the export |
///
/// The scheduler-wide metrics are made with the exporter. Those of a clock are
/// made by the first export that finds something recorded on that clock, so a
/// program whose timers all use the monotonic clock shows no series for the
/// other two; once made, a clock's metrics stay.
///
/// A Timer's unit is the backend's: swift-prometheus writes seconds, hence the
/// `_seconds` in the labels. Its default buckets (5 ms to 10 s) are too coarse
/// for lateness; give these labels buckets from a microsecond up
/// (`PrometheusMetricsFactory.durationHistogramBuckets`).
///
/// ## Cost and threads
///
/// An export takes a copy of the statistics (which does not wait for the
/// scheduler's thread) and records each value of the period's histograms into
/// the backend, so its time grows with the fires in the period. It never runs
/// on the scheduler's thread unless you call ``export()`` there: ``run(every:)``
/// runs on the global concurrent executor, whatever executor its task
/// prefers. Do not call ``export()`` from an inline handler or a job of the
/// same scheduler; its timers would wait for it.
///
/// The exporter keeps the scheduler alive. Exports made at the same time from
/// several threads are serialized, so each value is exported once.
public final class SchedulerMetrics: Sendable {
    /// The labels of the metrics, Prometheus names.
    public enum Label {
        /// A `Timer` per clock: each scheduled fire's lateness, from its
        /// deadline to the start of its handler call.
        public static let fireLateness = "precisiontimer_fire_lateness_seconds"
        /// A `Counter` per clock: handler calls, made by hand included.
        public static let fires = "precisiontimer_fires_total"
        /// A `Counter` per clock: ticks that fell due but did not fire on
        /// their own (`Tick.missed`).
        public static let missedTicks = "precisiontimer_missed_ticks_total"
        /// A `Timer`: the run time of each inline handler call.
        public static let handlerDuration = "precisiontimer_handler_duration_seconds"
        /// A `Timer`: the run time of each Swift concurrency job the scheduler
        /// ran as an executor.
        public static let jobDuration = "precisiontimer_job_duration_seconds"
        /// A `Counter`: times the scheduler's thread returned from a wait.
        public static let wakeups = "precisiontimer_wakeups_total"
        /// A `Counter`: Swift concurrency jobs run on the scheduler's thread.
        public static let jobs = "precisiontimer_jobs_total"
        /// A `Counter`: nanoseconds of CPU time the scheduler's thread spent
        /// spinning before zero-leeway deadlines.
        public static let spinNanoseconds = "precisiontimer_spin_nanoseconds_total"
        /// A `Counter`: times the system time was set while the scheduler had
        /// wall-clock timers.
        public static let wallClockChanges = "precisiontimer_wall_clock_changes_total"
        /// A `Gauge`: timers scheduled or suspended at the time of the export.
        public static let liveTimers = "precisiontimer_live_timers"
    }

    /// The scheduler whose statistics are exported.
    public let scheduler: TimerScheduler
    /// The value of the `scheduler` dimension of every metric.
    public let name: String

    private let factory: any MetricsFactory
    private let handlerDuration: CoreMetrics.Timer
    private let jobDuration: CoreMetrics.Timer
    private let wakeups: Counter
    private let jobs: Counter
    private let spinNanoseconds: Counter
    private let wallClockChanges: Counter
    private let liveTimers: Gauge

    /// The metrics of one clock.
    private struct ClockMetrics: Sendable {
        let lateness: CoreMetrics.Timer
        let fires: Counter
        let missedTicks: Counter
    }

    /// What exports share: the copy the previous export took, and the clocks'
    /// metrics made so far (indexed like `StatisticsDelta.clocks`). An export
    /// runs whole under the lock, so that two at once cannot add the same
    /// values twice.
    private struct State: Sendable {
        var previous: TimerStatistics?
        var clocks: [ClockMetrics?] = Array(repeating: nil, count: StatisticsDelta.clocks.count)
    }

    private let state = Mutex(State())

    /// An exporter of `scheduler`'s statistics, making its metrics with
    /// `factory`. Nothing is exported until ``export()`` or ``run(every:)``.
    ///
    /// - Parameters:
    ///   - scheduler: the scheduler to observe; the exporter keeps it.
    ///   - name: the value of the `scheduler` dimension. Default: the
    ///     scheduler's own (`TimerScheduler.name`: its `Options.name`,
    ///     `PrecisionTimer` for `TimerScheduler.shared`). Give each scheduler
    ///     a different one: two exporters with the same name add to the same
    ///     counters and timers.
    ///   - factory: where the metrics are made. Default: the one the program
    ///     bootstrapped (`MetricsSystem.factory`); tests pass their own.
    public init(scheduler: TimerScheduler, name: String? = nil, factory: any MetricsFactory = MetricsSystem.factory) {
        let name = name ?? scheduler.name
        self.scheduler = scheduler
        self.name = name
        self.factory = factory
        let dimensions = [("scheduler", name)]
        handlerDuration = CoreMetrics.Timer(label: Label.handlerDuration, dimensions: dimensions, factory: factory)
        jobDuration = CoreMetrics.Timer(label: Label.jobDuration, dimensions: dimensions, factory: factory)
        wakeups = Counter(label: Label.wakeups, dimensions: dimensions, factory: factory)
        jobs = Counter(label: Label.jobs, dimensions: dimensions, factory: factory)
        spinNanoseconds = Counter(label: Label.spinNanoseconds, dimensions: dimensions, factory: factory)
        wallClockChanges = Counter(label: Label.wallClockChanges, dimensions: dimensions, factory: factory)
        liveTimers = Gauge(label: Label.liveTimers, dimensions: dimensions, factory: factory)
    }

    /// Adds what the scheduler recorded since the previous export (the first
    /// time: since it was made or last reset) to the metrics, and sets the
    /// live-timer gauge.
    ///
    /// Safe from any thread; calls at the same time run one after the other.
    /// It takes time in proportion to the fires since the previous export:
    /// call it from a thread of your own, not from a handler or job of the
    /// scheduler it observes.
    public func export() {
        state.withLock { state in
            let statistics = scheduler.statistics
            let delta = StatisticsDelta(from: state.previous, to: statistics)
            state.previous = statistics

            for (index, source) in StatisticsDelta.clocks.enumerated() {
                let figures = delta.clocks[index]
                let recorded = figures.fires > 0 || figures.missedTicks > 0 || figures.lateness.count > 0
                guard recorded || state.clocks[index] != nil else { continue }
                let metrics = state.clocks[index] ?? makeClockMetrics(source)
                state.clocks[index] = metrics
                Self.replay(figures.lateness, into: metrics.lateness)
                Self.add(figures.fires, to: metrics.fires)
                Self.add(figures.missedTicks, to: metrics.missedTicks)
            }
            Self.replay(delta.handlerTime, into: handlerDuration)
            Self.replay(delta.jobTime, into: jobDuration)
            Self.add(delta.wakeups, to: wakeups)
            Self.add(delta.jobs, to: jobs)
            Self.add(delta.spinNanoseconds, to: spinNanoseconds)
            Self.add(delta.wallClockChanges, to: wallClockChanges)
            liveTimers.record(statistics.liveTimers)
        }
    }

    /// Exports every `period`, on a grid from the call, until the task that
    /// runs it is cancelled; then exports once more and returns.
    ///
    /// It runs on the global concurrent executor, never on the scheduler's
    /// thread, even in a task that prefers the scheduler
    /// (`Task(executorPreference:)`). It exports once at the start, so the
    /// gauge and the counters show at once. An export that takes longer than a
    /// period delays the next one to the next point of the grid (no burst).
    ///
    /// ```swift
    /// let exporter = Task { try await metrics.run(every: .seconds(10)) }
    /// ```
    ///
    /// - Parameter period: the time between exports; must be positive.
    /// - Throws: `PrecisionTimerError.invalidArgument` for a period that
    ///   is zero or negative, before any export. Cancellation is not an
    ///   error: it is how the loop ends.
    public func run(every period: Duration) async throws {
        guard period > .zero else {
            throw PrecisionTimerError.invalidArgument("the export period must be positive (got \(period))")
        }
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            let clock = ContinuousClock()
            var next = clock.now
            export()
            while !Task.isCancelled {
                next = next.advanced(by: period)
                let now = clock.now
                if next < now {  // an export or a stall took more than a period: skip to the grid
                    let behind = now - next
                    next = next.advanced(by: period * (behind / period).rounded(.up))
                }
                do {
                    try await clock.sleep(until: next, tolerance: nil)
                } catch {
                    break  // cancelled
                }
                export()
            }
            export()
        }
    }

    private func makeClockMetrics(_ source: PrecisionClock.Source) -> ClockMetrics {
        let dimensions = [("scheduler", name), ("clock", Self.dimensionValue(source))]
        return ClockMetrics(
            lateness: CoreMetrics.Timer(label: Label.fireLateness, dimensions: dimensions, factory: factory),
            fires: Counter(label: Label.fires, dimensions: dimensions, factory: factory),
            missedTicks: Counter(label: Label.missedTicks, dimensions: dimensions, factory: factory))
    }

    /// The `clock` dimension's value for `source`.
    static func dimensionValue(_ source: PrecisionClock.Source) -> String {
        switch source {
        case .monotonic: "monotonic"
        case .boottime: "boottime"
        case .realtime: "realtime"
        case .monotonicRaw: "monotonic_raw"  // no timer uses it
        }
    }

    /// Records each value of `histogram` into `timer`: the highest value of
    /// its bucket, as many times as the bucket holds values.
    private static func replay(_ histogram: LatencyHistogram, into timer: CoreMetrics.Timer) {
        histogram.forEachBucket { nanoseconds, count in
            for _ in 0..<count { timer.recordNanoseconds(nanoseconds) }
        }
    }

    private static func add<Count: BinaryInteger>(_ amount: Count, to counter: Counter) {
        if amount > 0 { counter.increment(by: amount) }
    }
}
#endif
