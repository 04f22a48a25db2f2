import Foundation
@testable import PrecisionTimer

/// Tasks consuming `ticks(every:)`, cancelled at random moments.
func tickWorker(_ world: ChaosWorld, _ scheduler: TimerScheduler, _ rng: inout SplitMix64) {
    let watchdog = world.watchdog
    let limit = Duration.nanoseconds(watchdog.limit) + .seconds(5)
    var inFlight: [(task: Task<Void, Never>, probe: TaskProbe, serial: Int, cancelAt: Int64)] = []
    var serial = 0
    while world.running || !inFlight.isEmpty {
        if world.running && inFlight.count < 6 {
            serial += 1
            let probe = TaskProbe()
            let interval = Duration.microseconds(Int64.random(in: 500...3_000, using: &rng))
            let name = "tick consumer #\(serial)"
            let task = Task.detached {
                await consumeTicks(world, scheduler, interval: interval, name: name)
                probe.done.store(true, ordering: .releasing)
            }
            inFlight.append((task, probe, serial, monoNow() + Int64.random(in: 2_000_000...300_000_000, using: &rng)))
        }
        let now = monoNow()
        if let i = inFlight.firstIndex(where: { $0.cancelAt <= now || !world.running }) {
            let entry = inFlight.remove(at: i)
            let op = watchdog.begin("tick-sequence consumer task #\(entry.serial) (chaos-tick): cancel() and its completion")
            entry.task.cancel()
            if waitUntil(timeout: limit, { entry.probe.done.load(ordering: .acquiring) }) {
                watchdog.end(op)
                world.count("tick tasks cancelled")
            }
        }
        usleep(UInt32.random(in: 500...5_000, using: &rng))
    }
}

func consumeTicks(_ world: ChaosWorld, _ scheduler: TimerScheduler, interval: Duration, name: String) async {
    let probe = RepeatProbe(name, world, checksGaps: true)
    let ticks = scheduler.ticks(every: interval, buffering: .all)
    for await tick in ticks { probe.fired(tick) }
}
