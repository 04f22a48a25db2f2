//===----------------------------------------------------------------------===//
// The periodic scenario's contenders: each way of waking on a 1 ms grid, one
// function each, all measured by the same lateness rule (TickGrid).
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import NIOPosix
import PrecisionTimer
import Synchronization

/// The schedulers of `RepeatingTimer` and `RepeatingTimer.noStats`, made alike:
/// their options are the same but for `recordsStatistics`, on (the default)
/// for `RepeatingTimer`, off for `RepeatingTimer.noStats`. Each runs its
/// contender's timer and nothing else.
struct RepeatingTimerSchedulers: Sendable {
    let recording: TimerScheduler
    let notRecording: TimerScheduler

    /// The two schedulers' options; the thread name is the same too.
    static func options(name: String) -> (recording: TimerScheduler.Options, notRecording: TimerScheduler.Options) {
        let recording = TimerScheduler.Options(name: name)
        var notRecording = recording
        notRecording.recordsStatistics = false
        return (recording, notRecording)
    }

    init(name: String) throws {
        let options = Self.options(name: name)
        recording = try TimerScheduler(options: options.recording)
        notRecording = try TimerScheduler(options: options.notRecording)
    }
}

extension Periodic {

    /// Every contender of `periodic-1khz`: ours, the system's, Foundation's
    /// Timer, SwiftNIO's, and cyclictest (at SCHED_OTHER and SCHED_FIFO) when
    /// it is installed.
    static func contenders(engines: RepeatingTimerSchedulers, asyncScheduler: TimerScheduler, cyclictest: String?,
                           nio: MultiThreadedEventLoopGroup) -> [PeriodicContender]
    {
        var list = baseContenders(engines: engines)
        list.append(PeriodicContender(name: executorName, cpuScope: .process) { ticks, interval, samples in
            try await executorSleep(asyncScheduler, ticks, interval, samples)
        })
        list.append(PeriodicContender(name: actorName, cpuScope: .process) { ticks, interval, samples in
            try await actorSleep(asyncScheduler, ticks, interval, samples)
        })
        list.append(PeriodicContender(name: foundationTimerName, cpuScope: .thread,
                                      note: "\(foundationTimerName): fire dates are wall-clock Dates (resolution "
                                          + "≈ 0.1 µs); a fire a few hundred ns before the grid counts as early",
                                      run: foundationTimer))
        list.append(NIOTimers.scheduleTask(group: nio))
        if let cyclictest { list += Cyclictest.contenders(path: cyclictest) }
        return list
    }

    static let foundationTimerName = "Foundation.Timer"
    // Our contenders are named after the API they measure.
    static let sleepName = "PrecisionClock.wait(.sleep)"
    static let sleepNoLeadName = "PrecisionClock.wait(.sleep).noLead"
    static let adaptiveName = "PrecisionClock.wait(.adaptive)"
    static let spinName = "PrecisionClock.wait(.spin)"
    static let asyncSleepName = "PrecisionClock.sleep(until:)"
    /// A task that prefers a dedicated scheduler, sleeping with `PrecisionClock.sleep(until:)`.
    static let executorName = "TimerScheduler.executor"
    /// The same loop as a method of an actor whose executor is that scheduler.
    static let actorName = "TimerScheduler.actor"
    /// A `RepeatingTimer` on a scheduler that records statistics (the default).
    static let repeatingName = "RepeatingTimer"
    /// The same timer on a scheduler that does not.
    static let repeatingNoStatsName = "RepeatingTimer.noStats"

    /// `clock.wait(until:strategy:)` on a dedicated thread.
    static func wait(_ name: String, _ strategy: WaitStrategy, note: String? = nil) -> PeriodicContender {
        let clock = PrecisionClock()
        return blocking(name, note: note) { deadline in
            _ = try clock.wait(until: .init(nanoseconds: deadline), strategy: strategy)
        }
    }

    static func baseContenders(engines: RepeatingTimerSchedulers) -> [PeriodicContender] {
        [
            wait(sleepName, .sleep),
            // One sleep aimed at the deadline (slack 1 ns, no lead): the kernel's
            // wake-up floor, for reading what `.sleep`'s lead buys.
            wait(sleepNoLeadName, .hybrid(margin: .zero),
                 note: "\(sleepNoLeadName): wait(until:strategy: .hybrid(margin: .zero)), one clock_nanosleep "
                     + "aimed at the deadline with 1 ns timer slack: the kernel's wake-up floor, which "
                     + "\(sleepName)'s lead works against"),
            wait(adaptiveName, .adaptive),
            wait(spinName, .spin),
            PeriodicContender(name: asyncSleepName, cpuScope: .process, run: asyncSleep),
            PeriodicContender(name: "DispatchSourceTimer", cpuScope: .process, run: dispatchSourceTimer),
            PeriodicContender(name: "DispatchQueue.asyncAfter", cpuScope: .process, run: asyncAfter),
            PeriodicContender(name: "Task.sleep", cpuScope: .process, run: taskSleep),
            blocking("clock_nanosleep") { deadline in
                let rc = sleepUntilRetrying(deadline)
                if rc != 0 { throw PrecisionTimerError.system(PrecisionTimerError.Errno(rawValue: rc), operation: "clock_nanosleep") }
            },
            PeriodicContender(name: repeatingName, cpuScope: .process, statisticsScheduler: engines.recording) {
                try await repeatingTimer(engines.recording, $0, $1, $2)
            },
            PeriodicContender(name: repeatingNoStatsName, cpuScope: .process,
                              note: "\(repeatingNoStatsName): \(repeatingName) on a scheduler whose options differ "
                                  + "only in recordsStatistics = false (\(repeatingName)'s records them, the default)") {
                try await repeatingTimer(engines.notRecording, $0, $1, $2)
            },
        ]
    }

    /// Foundation's `Timer`, tolerance 0, on a dedicated thread running its own
    /// RunLoop (the way its documentation gives it the best precision: nothing
    /// else on that run loop). Its fire date is a wall-clock `Date`; the grid's
    /// start is converted once, so tick k is due at start + k × interval.
    @Sendable
    static func foundationTimer(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws
        -> RoundOutcome
    {
        try await onDedicatedThread(name: "bench-runloop") {
            let cpu0 = threadCPUNanoseconds()
            let start = monoNow() + interval
            // Touched only on this thread, the run loop's.
            let round = GridRound<Timer>(
                samples: samples, grid: TickGrid(start: start, interval: interval, ticks: ticks),
                finish: { $0.invalidate() }  // the run loop's mode is empty now: run() returns
            ) { round, _, now in
                // Foundation.Timer says nothing of missed ticks: the rule decides.
                round.samples.append(round.grid.wake(at: now))
            }
            let fireDate = Date(timeIntervalSinceNow: Double(start - monoNow()) / 1e9)
            let timer = Timer(fire: fireDate, interval: Double(interval) / 1e9, repeats: true) { t in
                round.fired(t)
            }
            timer.tolerance = 0
            let runLoop = RunLoop.current
            runLoop.add(timer, forMode: .default)
            while !round.finished {
                _ = runLoop.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
            }
            timer.invalidate()
            return RoundOutcome(cpuNs: threadCPUNanoseconds() - cpu0, skipped: round.grid.missed)
        }
    }

    /// A blocking loop on a dedicated thread; CPU is that thread's CPU time.
    static func blocking(_ name: String, note: String? = nil, wait: @escaping @Sendable (Int64) throws -> Void)
        -> PeriodicContender
    {
        PeriodicContender(name: name, cpuScope: .thread, note: note) { ticks, interval, samples in
            try await onDedicatedThread(name: "bench-wait") {
                let cpu0 = threadCPUNanoseconds()
                let skipped = try TickGrid.run(ticks: ticks, start: monoNow() + interval, interval: interval,
                                               samples: samples) { deadline in
                    try wait(deadline)
                    return monoNow() - deadline
                }
                return RoundOutcome(cpuNs: threadCPUNanoseconds() - cpu0, skipped: skipped)
            }
        }
    }

    /// `try await clock.sleep(until:tolerance: nil)` in a task.
    @Sendable
    static func asyncSleep(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws -> RoundOutcome {
        let cpu0 = processCPUNanoseconds()
        let skipped = try await Task.detached {
            try await sleepLoop(ticks, interval, samples)
        }.value
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: skipped)
    }

    /// The grid slept on with `PrecisionClock.sleep(until:)`: the body of
    /// ``asyncSleep(_:_:_:)`` and ``executorSleep(_:_:_:_:)``, which differ only
    /// in the task it runs in. Returns the ticks skipped.
    static func sleepLoop(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws -> Int {
        let clock = PrecisionClock()
        return try await TickGrid.run(ticks: ticks, start: monoNow() + interval, interval: interval,
                                      samples: samples) { deadline in
            try await clock.sleep(until: .init(nanoseconds: deadline), tolerance: nil)
            return monoNow() - deadline
        }
    }

    /// `try await clock.sleep(until:tolerance: nil)` in a task that prefers
    /// `scheduler` (`Task(executorPreference:)`): the sleeps are timers of that
    /// scheduler and the task resumes on its thread.
    @Sendable
    static func executorSleep(_ scheduler: TimerScheduler, _ ticks: Int, _ interval: Int64, _ samples: SampleBuffer)
        async throws -> RoundOutcome
    {
        let cpu0 = processCPUNanoseconds()
        let skipped = try await Task(executorPreference: scheduler) {
            try await sleepLoop(ticks, interval, samples)
        }.value
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: skipped)
    }

    /// A control loop as an actor whose executor is a ``TimerScheduler``.
    actor SchedulerLoop {
        let scheduler: TimerScheduler
        nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

        init(scheduler: TimerScheduler) {
            self.scheduler = scheduler
        }

        /// The same grid as every contender's, slept on with `PrecisionClock.sleep(until:)`.
        func run(ticks: Int, interval: Int64, samples: SampleBuffer) async throws -> Int {
            let clock = PrecisionClock()
            var grid = TickGrid(start: monoNow() + interval, interval: interval, ticks: ticks)
            while !grid.finished {
                let deadline = grid.nextDeadline
                try await clock.sleep(until: .init(nanoseconds: deadline), tolerance: nil)
                samples.append(grid.wake(lateness: monoNow() - deadline))
            }
            return grid.missed
        }
    }

    @Sendable
    static func actorSleep(_ scheduler: TimerScheduler, _ ticks: Int, _ interval: Int64, _ samples: SampleBuffer)
        async throws -> RoundOutcome
    {
        let cpu0 = processCPUNanoseconds()
        let skipped = try await SchedulerLoop(scheduler: scheduler).run(ticks: ticks, interval: interval,
                                                                       samples: samples)
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: skipped)
    }

    /// `Task.sleep(until:tolerance: .zero, clock: .continuous)`, measured on
    /// ContinuousClock's own instants (CLOCK_BOOTTIME on Linux).
    @Sendable
    static func taskSleep(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws -> RoundOutcome {
        let cpu0 = processCPUNanoseconds()
        let skipped = try await Task.detached {
            // The grid on ContinuousClock's own time line: offsets from `base`.
            let clock = ContinuousClock()
            let base = clock.now
            return try await TickGrid.run(ticks: ticks, start: interval, interval: interval,
                                          samples: samples) { offset in
                let deadline = base + .nanoseconds(offset)
                try await Task.sleep(until: deadline, tolerance: .zero, clock: .continuous)
                return (clock.now - deadline).benchNanoseconds
            }
        }.value
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: skipped)
    }

    /// State of a Dispatch-driven round; touched only on its serial queue.
    final class DispatchGrid: @unchecked Sendable {
        let samples: SampleBuffer
        let queue: DispatchQueue
        let done = Latch()
        var grid: TickGrid
        var finished = false
        var source: DispatchSourceTimer?

        init(samples: SampleBuffer, start: Int64, interval: Int64, ticks: Int, queue: DispatchQueue) {
            self.samples = samples
            self.queue = queue
            grid = TickGrid(start: start, interval: interval, ticks: ticks)
        }

        // DispatchSourceTimer: one handler call per wake; `data` counts the grid
        // ticks it stands for (more than one when Dispatch coalesced missed ones).
        func sourceFired() {
            let now = monoNow()
            guard !finished, let source else { return }
            // Lateness against the earliest tick this fire serves, as for every
            // contender; the other ticks it stands for count as missed.
            let n = Swift.max(1, Int(source.data))
            samples.append(now - grid.nextDeadline)
            grid.fire(missed: n - 1)
            if grid.finished {
                finished = true
                source.cancel()
                self.source = nil
                done.signal()
            }
        }

        // asyncAfter: each handler schedules the earliest grid deadline not yet served.
        func scheduleAfter() {
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: UInt64(grid.nextDeadline))) { [self] in
                afterFired()
            }
        }

        func afterFired() {
            samples.append(grid.wake(at: monoNow()))
            if grid.finished {
                done.signal()
            } else {
                scheduleAfter()
            }
        }
    }

    @Sendable
    static func dispatchSourceTimer(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws
        -> RoundOutcome
    {
        let cpu0 = processCPUNanoseconds()
        let queue = DispatchQueue(label: "bench.dispatch-source")
        let start = monoNow() + interval
        let grid = DispatchGrid(samples: samples, start: start, interval: interval, ticks: ticks, queue: queue)
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        grid.source = timer
        timer.setEventHandler { grid.sourceFired() }
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: UInt64(start)),
                       repeating: .nanoseconds(Int(interval)), leeway: .nanoseconds(0))
        timer.activate()
        await grid.done.wait()
        timer.cancel()
        queue.sync {}
        let cpu = processCPUNanoseconds() - cpu0
        timer.setEventHandler(handler: nil)
        return RoundOutcome(cpuNs: cpu, skipped: grid.grid.missed)
    }

    @Sendable
    static func asyncAfter(_ ticks: Int, _ interval: Int64, _ samples: SampleBuffer) async throws -> RoundOutcome {
        let cpu0 = processCPUNanoseconds()
        let queue = DispatchQueue(label: "bench.async-after")
        let grid = DispatchGrid(samples: samples, start: monoNow() + interval, interval: interval, ticks: ticks,
                                queue: queue)
        grid.scheduleAfter()
        await grid.done.wait()
        queue.sync {}
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: grid.grid.missed)
    }

    static func repeatingTimer(_ engine: TimerScheduler, _ ticks: Int, _ interval: Int64, _ samples: SampleBuffer)
        async throws -> RoundOutcome
    {
        let tickLateness = SampleBuffer(capacity: ticks + 16)
        let slot = TimerSlot()
        let cpu0 = processCPUNanoseconds()
        let start = monoNow() + interval
        // Touched only on the engine thread. The call that serves the grid's
        // last tick cancels the timer (inside its handler, cancel returns at
        // once), so no call comes after it: the scheduler's statistics count
        // the calls the bench counts and no others.
        let round = GridRound<Tick>(samples: samples, grid: TickGrid(start: start, interval: interval, ticks: ticks),
                                    finish: { _ in slot.cancel() }) { round, tick, now in
            // The bench's own reading, first thing in the handler, as for every
            // other contender (not the scheduler's `Tick.firedAt`). `.skip`
            // reports the latest due tick; the earliest tick this fire serves is
            // `missed` intervals before it.
            let lateness = now - tick.deadline.nanoseconds
            round.samples.append(lateness + Int64(tick.missed) * round.grid.interval)
            tickLateness.append(lateness)
            round.grid.fire(missed: Int(tick.missed), last: Int(tick.index))
            if tick.deadline.nanoseconds != round.grid.deadline(Int(tick.index)) { round.gridMismatches += 1 }
            if now < tick.deadline.nanoseconds { round.earlyByOwnClock += 1 }
        }
        let timer = try engine.repeating(every: .nanoseconds(interval), startingAt: .init(nanoseconds: start),
                                         leeway: .zero, policy: .skip, delivery: .inline) { tick in
            round.fired(tick)
        }
        slot.set(timer)
        await round.done.wait()
        timer.cancel()  // from here: waits for the last call to end, and with it the scheduler's record of it
        return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: round.grid.missed,
                            gridMismatches: round.gridMismatches, earlyByOwnClock: round.earlyByOwnClock,
                            tickLatenessNs: Array(tickLateness.samples))
    }

    /// A timer handed to its own handler once it is made.
    final class TimerSlot: Sendable {
        private let timer = Mutex<RepeatingTimer?>(nil)

        func set(_ t: RepeatingTimer) { timer.withLock { $0 = t } }

        /// Cancels the timer, if set (inside its handler: at once, without waiting).
        func cancel() { timer.withLock { $0 }?.cancel() }
    }
}
