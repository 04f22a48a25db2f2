import Dispatch
import Foundation
import Logging
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// What a scheduler records: exact under virtual time (lateness, handler
/// time, counts, per clock), and on a real thread the parts only it has
/// (spinning, wake-ups, jobs, the opt-out, the slow-call log).
final class TimerStatisticsTests: XCTestCase {

    // MARK: - Virtual time: exact figures

    func testLatenessAndHandlerTimeAreRecordedExactly() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(10)
        // Tick 0 runs for 25 ms: tick 1 (due at +10 ms) is missed, tick 2
        // (due at +20 ms) fires 5 ms late; the rest on time.
        let timer = try scheduler.repeating(every: .milliseconds(10), startingAt: start) { tick in
            if tick.index == 0 { clock.busy(for: .milliseconds(25)) }
        }
        clock.advance(to: start + .milliseconds(40))
        let stats = scheduler.statistics
        let mono = stats.clock(.monotonic)
        XCTAssertEqual(mono.fires, 4)  // ticks 0, 2, 3, 4
        XCTAssertEqual(mono.missedTicks, 1)
        XCTAssertEqual(mono.lateness.count, 4)
        XCTAssertEqual(mono.lateness.max, .milliseconds(5))
        XCTAssertEqual(mono.lateness.percentile(50), .zero)
        XCTAssertEqual(stats.handlerTime.count, 4)
        XCTAssertEqual(stats.handlerTime.max, .milliseconds(25), "the virtual run time of tick 0's handler")
        XCTAssertEqual(stats.handlerTime.percentile(50), .zero)
        XCTAssertEqual(stats.fires, 4)
        XCTAssertEqual(stats.missedTicks, 1)
        XCTAssertEqual(stats.clock(.realtime).fires, 0)
        XCTAssertEqual(stats.clock(.monotonicRaw).fires, 0)
        XCTAssertEqual(stats.liveTimers, 1)
        withExtendedLifetime(timer) {}
    }

    func testEachCallOfABatchHasItsOwnRunTimeAQueuedOneBetweenThemIncluded() {
        let (scheduler, clock) = makeScheduler()
        let at = clock.now() + .milliseconds(1)
        let queue = DispatchQueue(label: "stats.batch")
        var timers: [OneShotTimer] = []
        for ms in [1, 2] {
            timers.append(scheduler.schedule(at: at) { _ in clock.busy(for: .milliseconds(ms)) })
        }
        timers.append(scheduler.schedule(at: at, delivery: .queue(queue)) { _ in })
        for ms in [3, 4] {
            timers.append(scheduler.schedule(at: at) { _ in clock.busy(for: .milliseconds(ms)) })
        }
        clock.advance(by: .milliseconds(1))
        queue.sync {}
        let handlerTime = scheduler.statistics.handlerTime
        XCTAssertEqual(handlerTime.count, 4, "the four inline calls, not the queued one")
        XCTAssertEqual(handlerTime.min, .milliseconds(1))
        XCTAssertEqual(handlerTime.max, .milliseconds(4))
        XCTAssertEqual(handlerTime.mean, .microseconds(2_500), "1, 2, 3 and 4 ms exactly")
        withExtendedLifetime(timers) {}
    }

    func testEachClockKeepsItsOwnFigures() {
        let (scheduler, clock) = makeScheduler()
        let a = scheduler.schedule(after: .milliseconds(1), clock: .boottime) { _ in clock.busy(for: .milliseconds(2)) }
        let b = scheduler.schedule(after: .milliseconds(2), clock: .realtime) { _ in }
        clock.advance(by: .milliseconds(5))
        let stats = scheduler.statistics
        XCTAssertEqual(stats.clock(.boottime).fires, 1)
        XCTAssertEqual(stats.clock(.boottime).lateness.max, .zero)
        XCTAssertEqual(stats.clock(.realtime).fires, 1)
        XCTAssertEqual(stats.clock(.realtime).lateness.max, .milliseconds(1),
                       "due at +2 ms, behind a handler that ran until +3 ms")
        XCTAssertEqual(stats.clock(.monotonic).fires, 0)
        XCTAssertEqual(stats.lateness.count, 2)
        XCTAssertEqual(stats.liveTimers, 0)
        withExtendedLifetime((a, b)) {}
    }

    func testAFireByHandCountsButHasNoLateness() {
        let (scheduler, clock) = makeScheduler()
        let timer = scheduler.schedule(after: .seconds(10)) { _ in }
        timer.fire()
        clock.advance(by: .milliseconds(1))
        let mono = scheduler.statistics.clock(.monotonic)
        XCTAssertEqual(mono.fires, 1)
        XCTAssertEqual(mono.lateness.count, 0)
    }

    /// A timer whose weak owner is gone ends without a handler call: it is
    /// not counted as a fire, and has no lateness, missed tick or run time.
    /// (The repeating timer makes one call first, the one-shot none.)
    func testATimerWhoseOwnerIsGoneEndsWithoutAFire() throws {
        final class Owner: Sendable {}
        for repeating in [false, true] {
            let (scheduler, clock) = makeScheduler()
            let calls = Recorder<Tick>()
            var owner: Owner? = Owner()
            let handler: @Sendable (Owner, Tick) -> Void = { _, tick in calls.append(tick) }
            let timer: any ScheduledTimer = repeating
                ? scheduler.repeating(every: .milliseconds(1), recordsLateness: true, owner: owner!, handler)
                : scheduler.schedule(after: .milliseconds(2), owner: owner!, handler)
            clock.advance(by: .milliseconds(1))
            owner = nil
            clock.busy(for: .milliseconds(3))  // the next tick finds it gone, late, with missed ticks
            clock.advance(by: .milliseconds(1))
            let stats = scheduler.statistics
            let made = repeating ? 1 : 0
            XCTAssertEqual(calls.count, made, "repeating: \(repeating)")
            XCTAssertEqual(stats.fires, made, "repeating: \(repeating): only the calls made")
            XCTAssertEqual(stats.missedTicks, 0, "repeating: \(repeating)")
            XCTAssertEqual(stats.lateness.count, made, "repeating: \(repeating)")
            XCTAssertEqual(stats.handlerTime.count, made, "repeating: \(repeating)")
            if let timer = timer as? RepeatingTimer {
                XCTAssertEqual(timer.lateness?.count, 1, "its own histogram: the one call")
            }
            XCTAssertTrue(timer.isCancelled, "repeating: \(repeating)")
            XCTAssertEqual(stats.liveTimers, 0, "repeating: \(repeating)")
        }
    }

    func testResetStartsAgainAndKeepsTheGauges() throws {
        let (scheduler, clock) = makeScheduler()
        let timer = try scheduler.repeating(every: .milliseconds(1), startingAt: clock.now() + .milliseconds(1)) { _ in }
        clock.advance(by: .milliseconds(10))
        let before = scheduler.statistics
        XCTAssertEqual(before.fires, 10)
        scheduler.resetStatistics()
        let after = scheduler.statistics
        XCTAssertEqual(after.fires, 0)
        XCTAssertEqual(after.lateness.count, 0)
        XCTAssertEqual(after.handlerTime.count, 0)
        XCTAssertEqual(after.wakeups, 0)
        XCTAssertEqual(after.liveTimers, 1, "a gauge: not reset")
        XCTAssertEqual(after.since, clock.now())
        XCTAssertEqual(before.fires, 10, "a copy taken before keeps its figures")
        XCTAssertEqual(before.lateness.count, 10)
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(scheduler.statistics.fires, 3)
        XCTAssertEqual(scheduler.statistics.wakeups, 3)
        withExtendedLifetime(timer) {}
    }

    func testATimerMadeToRecordKeepsItsOwnHistogram() throws {
        let (scheduler, clock) = makeScheduler()
        let start = clock.now() + .milliseconds(1)
        let watched = try scheduler.repeating(every: .milliseconds(1), startingAt: start, recordsLateness: true) { _ in }
        let other = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { tick in
            if tick.index == 2 { clock.busy(for: .microseconds(300)) }
        }
        clock.advance(by: .milliseconds(5))
        XCTAssertNil(other.lateness)
        let own = try XCTUnwrap(watched.lateness)
        XCTAssertEqual(own.count, 5)
        XCTAssertEqual(own.max, .zero, "the watched timer fires first at each instant")
        XCTAssertEqual(scheduler.statistics.lateness.count, 10, "the scheduler records both")
        watched.resetLateness()
        XCTAssertEqual(watched.lateness?.count, 0)
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(watched.lateness?.count, 1)
        withExtendedLifetime(other) {}
    }

    func testATimersOwnHistogramOutlivesCancelAndGoesWithItsHandle() throws {
        let (scheduler, clock) = makeScheduler()
        var watched: RepeatingTimer? = try scheduler.repeating(every: .milliseconds(1),
                                                               startingAt: clock.now() + .milliseconds(1),
                                                               recordsLateness: true) { _ in }
        clock.advance(by: .milliseconds(3))
        watched?.cancel()
        XCTAssertEqual(watched?.lateness?.count, 3, "readable after cancel, while the handle lives")
        XCTAssertEqual(scheduler.engine.state.withLock { $0.latenessRecords.count }, 1)
        watched = nil
        XCTAssertEqual(scheduler.engine.state.withLock { $0.latenessRecords.count }, 0,
                       "released with its handle, before the timer's storage can be reused")
    }

    /// The handle is released while a call of the timer runs (inside its own
    /// handler, and from another thread with the call running on a queue):
    /// the end of that call records nothing, so no record is left behind for
    /// the address of a freed timer, nor inherited by the next timer made there.
    func testAHandleReleasedDuringACallTakesItsRecordWithIt() throws {
        let (scheduler, clock) = makeScheduler()
        for _ in 0..<100 {
            let box = Locked<RepeatingTimer?>(nil)
            box.withLock { $0 = scheduler.repeating(every: .milliseconds(1), recordsLateness: true) { _ in
                box.withLock { $0 = nil }  // the only handle, released inside its call
            } }
            clock.advance(by: .milliseconds(1))
            XCTAssertNil(box.withLock { $0 })
            XCTAssertEqual(scheduler.engine.state.withLock { $0.latenessRecords.count }, 0,
                           "a record outlived its handle")
            let fresh = scheduler.repeating(every: .milliseconds(1), recordsLateness: true) { _ in }
            XCTAssertEqual(fresh.lateness?.count, 0, "a new timer inherited a released one's record")
        }

        let queue = DispatchQueue(label: "records-release")
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        var timer: RepeatingTimer? = scheduler.repeating(every: .milliseconds(1), delivery: .queue(queue),
                                                         recordsLateness: true) { _ in
            entered.signal()
            leave.wait()
        }
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success)
        timer = nil  // released while its call runs on the queue
        leave.signal()
        queue.sync {}
        XCTAssertNil(timer)
        XCTAssertEqual(scheduler.engine.state.withLock { $0.latenessRecords.count }, 0,
                       "the end of the running call recorded the released timer again")
    }

    func testQueueDeliveredFiresRecordLatenessButNoHandlerTime() {
        let (scheduler, clock) = makeScheduler()
        let queue = DispatchQueue(label: "stats.queue")
        let done = DispatchSemaphore(value: 0)
        let timer = scheduler.schedule(after: .milliseconds(1), delivery: .queue(queue)) { _ in done.signal() }
        clock.advance(by: .milliseconds(3))
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        queue.sync {}
        let stats = scheduler.statistics
        XCTAssertEqual(stats.clock(.monotonic).lateness.count, 1)
        XCTAssertEqual(stats.handlerTime.count, 0, "a queue's handler runs off the scheduler's thread")
        withExtendedLifetime(timer) {}
    }

    func testTheWallClockSetIsLoggedAtDebug() {
        let log = CapturedLog()
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock, logger: log.logger(level: .debug))
        let timer = scheduler.schedule(after: .seconds(60), clock: .realtime) { _ in }
        clock.setRealtime(clock.now(.realtime) + .seconds(3600))
        XCTAssertTrue(log.messages.contains { $0.level == .debug && $0.message.contains("system time set") },
                      "\(log.messages)")
        XCTAssertTrue(log.messages.allSatisfy { $0.level <= .debug }, "the library logs at debug or trace only")
        withExtendedLifetime(timer) {}
    }

    // MARK: - A real thread

    func testRealSchedulerRecordsSpinWakeupsJobsAndSlowCalls() async throws {
        let log = CapturedLog()
        var options = TimerScheduler.Options(name: "stats-real")
        options.slowCallThreshold = .milliseconds(2)
        let scheduler = try TimerScheduler(options: options, logger: log.logger(level: .debug))
        let fired = Atomic<Int>(0)
        let timer = scheduler.repeating(every: .milliseconds(1)) { tick in
            if fired.add(1, ordering: .relaxed).newValue == 5 { Thread.sleep(forTimeInterval: 0.005) }
        }
        // A job on the scheduler's thread: a task that prefers it.
        await withTaskExecutorPreference(scheduler) { await Task.yield() }
        let deadline = ContinuousClock.now + .seconds(30)
        while fired.load(ordering: .relaxed) < 20 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        timer.cancel()
        let stats = scheduler.statistics
        XCTAssertGreaterThanOrEqual(stats.fires, 20)
        XCTAssertEqual(stats.clock(.monotonic).lateness.count, stats.fires)
        XCTAssertEqual(stats.handlerTime.count, stats.fires)
        XCTAssertGreaterThanOrEqual(stats.handlerTime.max, .milliseconds(5), "the handler that slept 5 ms")
        XCTAssertGreaterThan(stats.wakeups, 0)
        XCTAssertGreaterThan(stats.jobs, 0)
        XCTAssertEqual(stats.jobTime.count, stats.jobs)
        XCTAssertGreaterThan(stats.spinTime, .zero, "zero-leeway timers spin their last stretch")
        XCTAssertEqual(scheduler.name, "stats-real")
        let slow = log.messages.filter { $0.message.contains("slow-call threshold") }
        XCTAssertGreaterThanOrEqual(slow.count, 1, "\(log.messages)")
        XCTAssertEqual(slow.first?.metadata["scheduler"], "stats-real")
        XCTAssertTrue(log.messages.allSatisfy { $0.level <= .debug })
    }

    /// On the scheduler's thread, in one batch: a one-shot whose owner is
    /// gone, then one that runs. Only the second is a fire with a run time.
    func testRealSchedulerCountsNoFireForAnOwnerGone() throws {
        final class Owner: Sendable {}
        let scheduler = try TimerScheduler(options: .init(name: "stats-owner"))
        let ran = Atomic<Int>(0)
        var owner: Owner? = Owner()
        let gone = scheduler.schedule(after: .milliseconds(20), owner: owner!) { _, _ in ran.add(1, ordering: .relaxed) }
        let live = scheduler.schedule(at: gone.deadline) { _ in ran.add(10, ordering: .relaxed) }
        owner = nil
        XCTAssertTrue(waitUntil(timeout: .seconds(30)) { gone.isCancelled && live.hasFired })
        XCTAssertTrue(waitUntil(timeout: .seconds(30)) { scheduler.statistics.handlerTime.count >= 1 })
        let stats = scheduler.statistics
        XCTAssertEqual(ran.load(ordering: .relaxed), 10)
        XCTAssertEqual(stats.fires, 1)
        XCTAssertEqual(stats.lateness.count, 1)
        XCTAssertEqual(stats.handlerTime.count, 1, "no run time for the call that did not run")
    }

    func testWithStatisticsOffOnlyCountsAreKept() throws {
        var options = TimerScheduler.Options(name: "stats-off")
        options.recordsStatistics = false
        let scheduler = try TimerScheduler(options: options)
        let fired = Atomic<Int>(0)
        let timer = scheduler.repeating(every: .milliseconds(1)) { _ in fired.add(1, ordering: .relaxed) }
        let deadline = ContinuousClock.now + .seconds(30)
        while fired.load(ordering: .relaxed) < 10 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        timer.cancel()
        let stats = scheduler.statistics
        XCTAssertGreaterThanOrEqual(stats.fires, 10)
        XCTAssertEqual(stats.lateness.count, 0)
        XCTAssertEqual(stats.handlerTime.count, 0)
    }
}

/// A swift-log handler that keeps what it is given.
final class CapturedLog: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = LockedValue<[Entry]>([])

    var messages: [Entry] { entries.withLock { $0 } }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
        }
    }
}
