import Foundation
@testable import PrecisionTimer

/// An actor whose executor is a scheduler: its sleeps are timers of that
/// scheduler, registered and resumed on its thread.
actor ChaosSleeper {
    let scheduler: TimerScheduler
    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

    init(_ scheduler: TimerScheduler) {
        self.scheduler = scheduler
    }

    /// Sleeps until `deadline`; returns whether the actor then ran on its
    /// scheduler's thread.
    func sleep(until deadline: PrecisionClock.Instant) async throws -> Bool {
        try await PrecisionClock.monotonic.sleep(until: deadline)
        return scheduler.isIsolatingCurrentContext() == true
    }
}

/// Tasks sleeping on a scheduler or on `PrecisionClock.sleep`, some cancelled:
/// from the global pool (on `scheduler` or the shared one), and on `exec`'s own
/// thread (a task that prefers it, an actor whose executor it is).
func sleepWorker(_ world: ChaosWorld, _ scheduler: TimerScheduler, _ exec: TimerScheduler,
                 _ rng: inout SplitMix64) {
    struct Sleep {
        let task: Task<Void, Never>
        let probe: TaskProbe
        let serial: Int
        let deadline: Int64
        let name: String
    }
    let watchdog = world.watchdog
    let limit = Duration.nanoseconds(watchdog.limit) + .seconds(5)
    var inFlight: [Sleep] = []
    var serial = 0
    while world.running || !inFlight.isEmpty {
        if world.running && inFlight.count < 8 {
            serial += 1
            let probe = TaskProbe()
            let mode = Int.random(in: 0..<4, using: &rng)
            let deadline = PrecisionClock.monotonic.now + .microseconds(Int64.random(in: 0...30_000, using: &rng))
            let name = ["PrecisionClock.sleep #\(serial) (shared scheduler)",
                        "chaos-sleep sleep(until:) #\(serial)",
                        "PrecisionClock.sleep #\(serial) (a task that prefers chaos-exec)",
                        "PrecisionClock.sleep #\(serial) (an actor on chaos-exec)"][mode]
            // One sleep; false when the task did not resume on `exec`'s thread
            // where it should have.
            let sleep: @Sendable () async throws -> Bool = {
                switch mode {
                case 0:
                    try await PrecisionClock.monotonic.sleep(until: deadline)
                    return true
                case 1:
                    try await scheduler.sleep(until: deadline)
                    return true
                case 2:
                    try await PrecisionClock.monotonic.sleep(until: deadline)
                    return exec.isIsolatingCurrentContext() == true
                default:
                    return try await ChaosSleeper(exec).sleep(until: deadline)
                }
            }
            let body: @Sendable () async -> Void = {
                let outcome: String
                do {
                    let onItsThread = try await sleep()
                    let now = PrecisionClock.monotonic.now
                    if now < deadline {
                        world.report.record(.early, "\(name): returned at \(now.nanoseconds), before \(deadline.nanoseconds)")
                    }
                    outcome = onItsThread ? "returned" : "returned on another thread than chaos-exec's"
                } catch is CancellationError {
                    outcome = "cancelled"
                } catch {
                    outcome = "threw \(error)"
                }
                probe.outcome.withLock { $0 = outcome }
                probe.done.store(true, ordering: .releasing)
            }
            let task = mode == 2 ? Task(executorPreference: exec, operation: body) : Task.detached(operation: body)
            if mode >= 2 { world.count("sleeps on chaos-exec's thread") }
            inFlight.append(Sleep(task: task, probe: probe, serial: serial, deadline: deadline.nanoseconds, name: name))
        }
        // Harvest.
        let now = monoNow()
        inFlight.removeAll { entry in
            if entry.probe.done.load(ordering: .acquiring) {
                let outcome = entry.probe.outcome.withLock { $0 }
                if outcome == "cancelled" && !entry.probe.cancelledByUs.load(ordering: .acquiring) {
                    world.report.record(.violation, "\(entry.name): CancellationError without a cancel")
                } else if outcome != "cancelled" && outcome != "returned" {
                    world.report.record(.violation, "\(entry.name): \(outcome)")
                }
                world.count(outcome == "cancelled" ? "sleeps cancelled" : "sleeps completed")
                return true
            }
            if !entry.probe.cancelledByUs.load(ordering: .acquiring) && now > entry.deadline + 5_000_000_000 {
                world.report.record(.lost, "\(entry.name): not resumed 5 s after its deadline",
                                    key: entry.name.split(separator: "#").first.map(String.init) ?? entry.name)
                return true
            }
            return false
        }
        // Cancel one at a random moment (all of them at the end).
        if !inFlight.isEmpty && (!world.running || Int.random(in: 0..<3, using: &rng) == 0) {
            let i = Int.random(in: inFlight.indices, using: &rng)
            let entry = inFlight[i]
            if !entry.probe.cancelledByUs.load(ordering: .acquiring) {
                let op = watchdog.begin("\(entry.name): cancel() and its completion")
                entry.probe.cancelledByUs.store(true, ordering: .releasing)
                entry.task.cancel()
                if waitUntil(timeout: limit, { entry.probe.done.load(ordering: .acquiring) }) {
                    watchdog.end(op)
                } else {
                    inFlight.remove(at: i)  // abandoned: the watchdog has named it
                }
            }
        }
        usleep(UInt32.random(in: 200...3_000, using: &rng))
    }
}
