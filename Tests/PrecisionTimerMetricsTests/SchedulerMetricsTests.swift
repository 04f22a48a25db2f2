// Compiled with the package trait `Metrics` (`swift test --traits Metrics`),
// which the module under test needs.
#if Metrics
import CoreMetrics
import MetricsTestKit
import PrecisionTimer
import PrecisionTimerMetrics
import Synchronization
import XCTest

/// SchedulerMetrics, mostly on virtual time: there every lateness, run time
/// and count is known exactly, so the tests assert the values each export
/// adds. The tests of `run(every:)` and of a real scheduler run in real time
/// and assert what holds however the machine is loaded.
///
/// How the virtual clock makes exact figures: a scheduler wakes at a timer's
/// deadline plus its leeway, so a one-shot with 500 µs of leeway fires exactly
/// 500 µs late; a handler that calls `clock.busy(for:)` runs for exactly that
/// long and delays the timers due meanwhile by what is left of it.
final class SchedulerMetricsTests: XCTestCase {
    typealias Label = SchedulerMetrics.Label

    /// The name every test exporter gives its scheduler.
    let schedulerName = "test"
    var scheduler: [(String, String)] { [("scheduler", schedulerName)] }
    func on(_ clock: String) -> [(String, String)] { [("scheduler", schedulerName), ("clock", clock)] }

    /// A virtual scheduler, a test metrics factory, and an exporter between them.
    struct Rig {
        let clock = VirtualClock()
        let scheduler: TimerScheduler
        let metrics = TestMetrics()
        let exporter: SchedulerMetrics

        init(name: String) {
            scheduler = TimerScheduler(clock: clock)
            exporter = SchedulerMetrics(scheduler: scheduler, name: name, factory: metrics)
        }
    }

    /// Asserts that `values` are `expected`, each within the histogram's
    /// precision: a value is exported as the highest value of its bucket, at
    /// most 1/128 above it.
    func assertValues(_ values: [Int64], _ expected: [Duration],
                      file: StaticString = #filePath, line: UInt = #line) {
        let wanted = expected.map { Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000 }
        XCTAssertEqual(values.count, wanted.count, "values \(values), expected \(wanted)", file: file, line: line)
        for (value, want) in zip(values.sorted(), wanted.sorted()) {
            XCTAssertTrue(value >= want && value <= want + want / 128,
                          "exported \(value) ns for \(want) ns", file: file, line: line)
        }
    }

    // MARK: - What an export records

    func testEachFireRecordsItsLatenessOnTheTimerOfItsClock() throws {
        let rig = Rig(name: schedulerName)
        let monotonic = rig.scheduler.schedule(after: .milliseconds(1), leeway: .microseconds(500)) { _ in }
        let realtime = rig.scheduler.schedule(after: .milliseconds(2), clock: .realtime,
                                              leeway: .microseconds(1_250)) { _ in }
        rig.clock.advance(by: .milliseconds(10))
        rig.exporter.export()

        // A histogram that holds one value exports it exactly (its bucket's
        // highest value is capped at the largest value recorded).
        XCTAssertEqual(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values, [500_000])
        XCTAssertEqual(try rig.metrics.expectTimer(Label.fireLateness, on("realtime")).values, [1_250_000])
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).totalValue, 1)
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("realtime")).totalValue, 1)
        // No timer ran on the boottime clock: it has no metrics.
        XCTAssertEqual(rig.metrics.timers(label: Label.fireLateness).count, 2)
        XCTAssertThrowsError(try rig.metrics.expectTimer(Label.fireLateness, on("boottime")))
        XCTAssertThrowsError(try rig.metrics.expectCounter(Label.fires, on("boottime")))
        withExtendedLifetime((monotonic, realtime)) {}
    }

    func testManyValuesAreExportedWithinTheHistogramsPrecision() throws {
        let rig = Rig(name: schedulerName)
        // Leeways from 10 µs to 1 s: each one-shot fires exactly its leeway
        // late (its deadline 2 s after the previous one's, so that none is
        // coalesced with another).
        let leeways: [Duration] = [.microseconds(10), .microseconds(333), .microseconds(777), .milliseconds(3),
                                   .microseconds(12_345), .milliseconds(250), .seconds(1)]
        let timers = leeways.enumerated().map { i, leeway in
            rig.scheduler.schedule(after: .seconds(2 * (i + 1)), leeway: leeway) { _ in }
        }
        rig.clock.advance(by: .seconds(20))
        rig.exporter.export()
        assertValues(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values, leeways)
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).totalValue, 7)
        withExtendedLifetime(timers) {}
    }

    func testHandlerTimeIsRecordedAndDelaysTheTimersDueMeanwhile() throws {
        let rig = Rig(name: schedulerName)
        let clock = rig.clock
        // Due at 1 ms, runs 2.5 ms; the timer due at 2 ms fires at 3.5 ms.
        let slow = rig.scheduler.schedule(after: .milliseconds(1)) { _ in clock.busy(for: .microseconds(2_500)) }
        let delayed = rig.scheduler.schedule(after: .milliseconds(2)) { _ in }
        rig.clock.advance(by: .milliseconds(5))
        rig.exporter.export()

        assertValues(try rig.metrics.expectTimer(Label.handlerDuration, scheduler).values,
                     [.microseconds(2_500), .zero])
        assertValues(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values,
                     [.zero, .microseconds(1_500)])
        XCTAssertEqual(try rig.metrics.expectTimer(Label.jobDuration, scheduler).values, [])
        // One wake-up per fire: the delayed timer, found due when the slow
        // handler returned, fires in a round of its own.
        XCTAssertEqual(try rig.metrics.expectCounter(Label.wakeups, scheduler).totalValue, 2)
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).totalValue, 2)
        withExtendedLifetime((slow, delayed)) {}
    }

    func testMissedTicksAreCountedOnTheirClock() throws {
        let rig = Rig(name: schedulerName)
        let clock = rig.clock
        let first = Atomic(true)
        // Tick 1 (due at 1 ms) runs 3.5 ms; at 4.5 ms ticks 2, 3 and 4 are
        // due: `skip` fires tick 4, 0.5 ms late, and reports 2 missed.
        let timer = rig.scheduler.repeating(every: .milliseconds(1), clock: .boottime, policy: .skip) { _ in
            if first.exchange(false, ordering: .relaxed) { clock.busy(for: .microseconds(3_500)) }
        }
        rig.clock.advance(by: .microseconds(4_600))
        rig.exporter.export()

        XCTAssertEqual(try rig.metrics.expectCounter(Label.missedTicks, on("boottime")).totalValue, 2)
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("boottime")).totalValue, 2)
        assertValues(try rig.metrics.expectTimer(Label.fireLateness, on("boottime")).values,
                     [.zero, .microseconds(500)])
        withExtendedLifetime(timer) {}
    }

    func testJobsOnTheSchedulerAreCountedAndTimed() async throws {
        let rig = Rig(name: schedulerName)
        let clock = rig.clock
        // A task that prefers the virtual scheduler runs as one job inside the
        // next advance; it keeps the thread for 700 µs.
        let task = Task(executorPreference: rig.scheduler) { clock.busy(for: .microseconds(700)) }
        await rig.clock.advance(by: .zero)
        await task.value
        rig.exporter.export()

        XCTAssertEqual(try rig.metrics.expectCounter(Label.jobs, scheduler).totalValue, 1)
        assertValues(try rig.metrics.expectTimer(Label.jobDuration, scheduler).values, [.microseconds(700)])
        XCTAssertEqual(try rig.metrics.expectTimer(Label.handlerDuration, scheduler).values, [])
    }

    func testLiveTimersAreAGaugeSetAtEachExport() throws {
        let rig = Rig(name: schedulerName)
        let timers = (1...3).map { i in rig.scheduler.schedule(after: .seconds(i)) { _ in } }
        rig.exporter.export()
        timers[0].cancel()
        rig.exporter.export()
        rig.clock.advance(by: .seconds(2))  // the second fires and ends
        rig.exporter.export()
        XCTAssertEqual(try rig.metrics.expectGauge(Label.liveTimers, scheduler).values, [3, 2, 1])
        withExtendedLifetime(timers) {}
    }

    func testWallClockChangesAreCountedAcrossResets() throws {
        let rig = Rig(name: schedulerName)
        let alarm = rig.scheduler.schedule(after: .seconds(3600), clock: .realtime) { _ in }
        rig.clock.setRealtime(rig.clock.now(.realtime) + .seconds(60))
        rig.exporter.export()
        rig.scheduler.resetStatistics()  // the count of changes is kept
        rig.clock.setRealtime(rig.clock.now(.realtime) + .seconds(60))
        rig.exporter.export()
        XCTAssertEqual(try rig.metrics.expectCounter(Label.wallClockChanges, scheduler).values, [1, 1])
        withExtendedLifetime(alarm) {}
    }

    // MARK: - Deltas

    func testEachExportAddsWhatWasRecordedSinceThePreviousOne() throws {
        let rig = Rig(name: schedulerName)
        // Fires at k ms + 100 µs, each exactly 100 µs late.
        let timer = rig.scheduler.repeating(every: .milliseconds(1), leeway: .microseconds(100)) { _ in }
        rig.clock.advance(by: .microseconds(10_500))  // ticks 1…10
        rig.exporter.export()
        rig.clock.advance(by: .milliseconds(5))       // ticks 11…15
        rig.exporter.export()
        rig.exporter.export()                          // nothing new

        let fires = try rig.metrics.expectCounter(Label.fires, on("monotonic"))
        XCTAssertEqual(fires.values, [10, 5])
        XCTAssertEqual(fires.totalValue, 15)
        XCTAssertEqual(try rig.metrics.expectCounter(Label.wakeups, scheduler).values, [10, 5])
        assertValues(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values,
                     Array(repeating: .microseconds(100), count: 15))
        assertValues(try rig.metrics.expectTimer(Label.handlerDuration, scheduler).values,
                     Array(repeating: .zero, count: 15))
        XCTAssertEqual(try rig.metrics.expectCounter(Label.missedTicks, on("monotonic")).values, [])
        XCTAssertEqual(try rig.metrics.expectGauge(Label.liveTimers, scheduler).values, [1, 1, 1])
        withExtendedLifetime(timer) {}
    }

    func testTheFirstExportTakesEverythingSinceTheSchedulerWasMade() throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.repeating(every: .milliseconds(2), leeway: .microseconds(300)) { _ in }
        rig.clock.advance(by: .milliseconds(7))  // ticks at 2, 4, 6 ms
        // An exporter made now still sees the fires before it.
        let late = SchedulerMetrics(scheduler: rig.scheduler, name: "late", factory: rig.metrics)
        late.export()
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, [("scheduler", "late"), ("clock", "monotonic")])
            .totalValue, 3)
        XCTAssertEqual(try rig.metrics.expectTimer(Label.fireLateness, [("scheduler", "late"), ("clock", "monotonic")])
            .values, [300_000, 300_000, 300_000])
        withExtendedLifetime(timer) {}
    }

    func testAfterAResetTheNextExportTakesTheNewFiguresWhole() throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.repeating(every: .milliseconds(1), leeway: .microseconds(200)) { _ in }
        rig.clock.advance(by: .microseconds(4_500))  // ticks 1…4
        rig.exporter.export()
        rig.clock.advance(by: .milliseconds(6))      // ticks 5…10: never exported
        rig.scheduler.resetStatistics()
        rig.clock.advance(by: .milliseconds(2))      // ticks 11, 12
        rig.exporter.export()
        rig.clock.advance(by: .milliseconds(3))      // ticks 13…15
        rig.exporter.export()

        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).values, [4, 2, 3])
        XCTAssertEqual(try rig.metrics.expectCounter(Label.wakeups, scheduler).values, [4, 2, 3])
        XCTAssertEqual(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values.count, 9)
        withExtendedLifetime(timer) {}
    }

    func testAResetFollowedByMoreFiresThanBeforeIsStillSeen() throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.repeating(every: .milliseconds(1), leeway: .microseconds(200)) { _ in }
        rig.clock.advance(by: .microseconds(2_500))  // ticks 1, 2
        rig.exporter.export()
        rig.clock.advance(by: .microseconds(1_000))  // tick 3: lost to the reset
        rig.scheduler.resetStatistics()
        rig.clock.advance(by: .milliseconds(5))      // ticks 4…8: more than the 2 exported
        rig.exporter.export()
        // Had the reset gone unseen, the second export would add 5 − 2 = 3.
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).values, [2, 5])
        XCTAssertEqual(try rig.metrics.expectTimer(Label.fireLateness, on("monotonic")).values.count, 7)
        withExtendedLifetime(timer) {}
    }

    /// A reset at the very instant the exported figures began (virtual time
    /// has not moved since the scheduler was made), followed by more fires
    /// than before: the scheduler's count of resets tells it apart from no
    /// reset, so the export after it adds the new figures whole.
    func testAResetAtTheInstantTheFiguresBeganIsStillSeen() throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.repeating(every: .milliseconds(1)) { _ in }
        for _ in 0..<3 { timer.fire() }
        rig.clock.advance(by: .zero)
        rig.exporter.export()
        rig.scheduler.resetStatistics()  // at the same instant as the figures' start
        for _ in 0..<5 { timer.fire() }
        rig.clock.advance(by: .zero)
        rig.exporter.export()
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).values, [3, 5])
        withExtendedLifetime(timer) {}
    }

    // MARK: - Dimensions and labels

    func testEveryMetricCarriesTheSchedulerAndThePerClockOnesTheClock() throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.schedule(after: .milliseconds(1)) { _ in }
        rig.clock.advance(by: .milliseconds(2))
        rig.exporter.export()

        let counters = Dictionary(grouping: rig.metrics.counters, by: \.label)
        XCTAssertEqual(Set(counters.keys), [Label.fires, Label.missedTicks, Label.wakeups, Label.jobs,
                                            Label.spinNanoseconds, Label.wallClockChanges])
        let timers = Dictionary(grouping: rig.metrics.timers, by: \.label)
        XCTAssertEqual(Set(timers.keys), [Label.fireLateness, Label.handlerDuration, Label.jobDuration])
        XCTAssertEqual(rig.metrics.recorders.map(\.label), [Label.liveTimers])

        let perClock: Set = [Label.fires, Label.missedTicks, Label.fireLateness]
        let all: [(String, [(String, String)])] = rig.metrics.counters.map { ($0.label, $0.dimensions) }
            + rig.metrics.timers.map { ($0.label, $0.dimensions) }
            + rig.metrics.recorders.map { ($0.label, $0.dimensions) }
        for (label, dimensions) in all {
            let expected = perClock.contains(label) ? on("monotonic") : scheduler
            XCTAssertEqual(dimensions.map(\.0), expected.map(\.0), label)
            XCTAssertEqual(dimensions.map(\.1), expected.map(\.1), label)
        }
        XCTAssertEqual(Label.fireLateness, "precisiontimer_fire_lateness_seconds")
        XCTAssertEqual(Label.liveTimers, "precisiontimer_live_timers")
        withExtendedLifetime(timer) {}
    }

    func testTwoSchedulersExportSeparateSeries() throws {
        let metrics = TestMetrics()
        let clock = VirtualClock()
        let a = TimerScheduler(clock: clock), b = TimerScheduler(clock: clock)
        let exportA = SchedulerMetrics(scheduler: a, name: "a", factory: metrics)
        let exportB = SchedulerMetrics(scheduler: b, name: "b", factory: metrics)
        let timers = [a.schedule(after: .milliseconds(1)) { _ in }, b.schedule(after: .milliseconds(1)) { _ in },
                      b.schedule(after: .milliseconds(2)) { _ in }]
        clock.advance(by: .milliseconds(3))
        exportA.export()
        exportB.export()
        XCTAssertEqual(try metrics.expectCounter(Label.fires, [("scheduler", "a"), ("clock", "monotonic")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Label.fires, [("scheduler", "b"), ("clock", "monotonic")]).totalValue, 2)
        withExtendedLifetime(timers) {}
    }

    // MARK: - run(every:)

    func testRunExportsOnceMoreWhenCancelled() async throws {
        let rig = Rig(name: schedulerName)
        let timer = rig.scheduler.repeating(every: .milliseconds(1), leeway: .microseconds(100)) { _ in }
        let exporter = rig.exporter
        // A period longer than the test: only the first and the last export happen.
        let running = Task { try await exporter.run(every: .seconds(3600)) }
        await rig.clock.advance(by: .microseconds(3_500))  // ticks 1…3
        running.cancel()
        try await running.value
        XCTAssertEqual(try rig.metrics.expectCounter(Label.fires, on("monotonic")).totalValue, 3)
        XCTAssertEqual(try rig.metrics.expectGauge(Label.liveTimers, scheduler).values, [1, 1])
        withExtendedLifetime(timer) {}
    }

    func testRunExportsEveryPeriod() async throws {
        let rig = Rig(name: schedulerName)
        let exporter = rig.exporter
        let running = Task { try await exporter.run(every: .milliseconds(5)) }
        let gauge = try rig.metrics.expectGauge(Label.liveTimers, scheduler)
        let deadline = ContinuousClock.now + .seconds(30)
        while gauge.values.count < 4 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        running.cancel()
        try await running.value
        XCTAssertGreaterThanOrEqual(gauge.values.count, 5, "the start, three periods and the end")
    }

    func testRunRejectsAPeriodThatIsNotPositive() async throws {
        let rig = Rig(name: schedulerName)
        for period in [Duration.zero, .milliseconds(-1)] {
            do {
                try await rig.exporter.run(every: period)
                XCTFail("run(every: \(period)) returned")
            } catch let error as PrecisionTimerError {
                guard case .invalidArgument(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("positive"), message)
            }
        }
        XCTAssertEqual(try rig.metrics.expectGauge(Label.liveTimers, scheduler).values, [], "nothing exported")
    }

    /// A task that prefers the scheduler would run `run(every:)` on the
    /// scheduler's thread; its exports must happen elsewhere all the same.
    func testRunNeverExportsOnTheSchedulersThread() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "observed"))
        let factory = ThreadCheckingFactory(scheduler: scheduler)
        let exporter = SchedulerMetrics(scheduler: scheduler, name: "observed", factory: factory)
        let running = Task(executorPreference: scheduler) { try await exporter.run(every: .milliseconds(2)) }
        let deadline = ContinuousClock.now + .seconds(30)
        while factory.gaugeRecords.withLock({ $0.count }) < 3 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        running.cancel()
        try await running.value
        let records = factory.gaugeRecords.withLock { $0 }
        XCTAssertGreaterThanOrEqual(records.count, 3)
        XCTAssertEqual(records.filter { $0 }.count, 0, "exports made on the scheduler's thread")
    }

    // MARK: - Real time

    /// A real scheduler's zero-leeway timer spins before its deadlines. Its
    /// thread keeps recording while the test reads, so each exported total
    /// lies between a copy of the statistics taken just before the last
    /// export and one taken just after it.
    func testARealSchedulersFiguresAreExportedAsTheStatisticsHoldThem() async throws {
        let scheduler = try TimerScheduler(options: .init(name: "real"))
        let metrics = TestMetrics()
        let exporter = SchedulerMetrics(scheduler: scheduler, name: "real", factory: metrics)
        let timer = scheduler.repeating(every: .milliseconds(1)) { _ in }
        let deadline = ContinuousClock.now + .seconds(30)
        while scheduler.statistics.fires < 10 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        exporter.export()
        while scheduler.statistics.fires < 20 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let before = scheduler.statistics
        exporter.export()
        let after = scheduler.statistics
        timer.cancel()

        func assertBetween(_ exported: Int64, _ figure: (TimerStatistics) -> Int, _ what: String,
                           line: UInt = #line) {
            XCTAssertTrue(Int64(figure(before)) <= exported && exported <= Int64(figure(after)),
                          "\(what): exported \(exported), statistics \(figure(before))…\(figure(after))", line: line)
        }
        let perClock = [("scheduler", "real"), ("clock", "monotonic")]
        let wide = [("scheduler", "real")]
        XCTAssertGreaterThanOrEqual(before.fires, 20)
        assertBetween(try metrics.expectCounter(Label.fires, perClock).totalValue, \.fires, "fires")
        assertBetween(Int64(try metrics.expectTimer(Label.fireLateness, perClock).values.count),
                      \.lateness.count, "lateness values")
        assertBetween(Int64(try metrics.expectTimer(Label.handlerDuration, wide).values.count),
                      \.handlerTime.count, "handler times")
        assertBetween(try metrics.expectCounter(Label.wakeups, wide).totalValue, \.wakeups, "wake-ups")
        let spin = { (s: TimerStatistics) in Int(s.spinTime.components.seconds * 1_000_000_000
                                                 + s.spinTime.components.attoseconds / 1_000_000_000) }
        XCTAssertGreaterThan(spin(before), 0, "a zero-leeway timer spins before its deadlines")
        assertBetween(try metrics.expectCounter(Label.spinNanoseconds, wide).totalValue, spin, "spin time")
        XCTAssertEqual(try metrics.expectGauge(Label.liveTimers, wide).values, [1, 1])
    }
}

/// A metrics factory that notes, for each value recorded into a gauge, whether
/// it was recorded on `scheduler`'s thread; everything else goes to a
/// TestMetrics.
final class ThreadCheckingFactory: MetricsFactory, Sendable {
    let scheduler: TimerScheduler
    let gaugeRecords = Mutex<[Bool]>([])
    let inner = TestMetrics()

    init(scheduler: TimerScheduler) { self.scheduler = scheduler }

    final class Recorder: RecorderHandler, Sendable {
        let factory: ThreadCheckingFactory
        init(_ factory: ThreadCheckingFactory) { self.factory = factory }
        func record(_ value: Int64) {
            let onThread = factory.scheduler.isIsolatingCurrentContext() ?? false
            factory.gaugeRecords.withLock { $0.append(onThread) }
        }
        func record(_ value: Double) { record(Int64(value)) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        inner.makeCounter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        Recorder(self)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        inner.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
#endif
