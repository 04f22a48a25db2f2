import Foundation
@testable import PrecisionTimer

/// Private schedulers made, used and released; their threads must all end.
func privateWorker(_ world: ChaosWorld, _ rng: inout SplitMix64) {
    let watchdog = world.watchdog
    var serial = 0
    var probes: [ShotProbe] = []
    while world.running {
        serial += 1
        var options = TimerScheduler.Options(name: "chaos-p\(serial % 1000)")
        options.blocksAsyncSignals = Bool.random(using: &rng)
        let scheduler: TimerScheduler
        do { scheduler = try TimerScheduler(options: options) } catch {
            world.report.record(.violation, "private scheduler: init threw \(error)")
            return
        }
        let label = "private scheduler chaos-p\(serial % 1000) #\(serial)"
        let near = ShotProbe("\(label): a one-shot due in at most 3 ms", world)
        probes.append(near)
        let repeats = RepeatProbe("\(label): repeating", world, checksGaps: true)
        var nearTimer: OneShotTimer?
        var farTimer: OneShotTimer?
        var repeating: RepeatingTimer?
        let deadline = PrecisionClock.monotonic.now + .microseconds(Int64.random(in: 0...3_000, using: &rng))
        nearTimer = scheduler.schedule(at: deadline) { near.fired($0) }
        farTimer = scheduler.schedule(after: .seconds(30)) { _ in }
        repeating = scheduler.repeating(every: .microseconds(Int64.random(in: 300...2_000, using: &rng))) {
            repeats.fired($0)
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            farTimer?.fire()
            watchdog.guarded("\(label): cancel() after fire() of its far one-shot") { farTimer?.cancel() }
            world.count("private: fire()+cancel()")
        case 1:
            watchdog.guarded("\(label): cancel() of its far one-shot") { farTimer?.cancel() }
        case 2:
            farTimer?.suspend()
        default:
            break
        }
        if Bool.random(using: &rng) {
            repeating?.suspend()
            usleep(UInt32.random(in: 0...2_000, using: &rng))
            repeating?.resume()
        }
        if Bool.random(using: &rng) { repeating?.fire() }
        if Int.random(in: 0..<4, using: &rng) == 0 {
            watchdog.guarded("\(label): cancel() of its near one-shot") { nearTimer?.cancel() }
            near.stopped.store(true, ordering: .releasing)
        }
        usleep(UInt32.random(in: 0...5_000, using: &rng))
        if !waitUntil(timeout: .seconds(10), { near.settled }) {
            world.report.record(.lost, "\(near.name): not fired within 10 s", key: "private near one-shot")
            near.stopped.store(true, ordering: .releasing)  // reported once
        }
        watchdog.guarded("\(label): release of its timers") {
            nearTimer = nil
            farTimer = nil
            repeating = nil
        }
        repeats.markReleased()
        world.count("private schedulers")
        // The scheduler itself is released here (never blocks).
        withExtendedLifetime(scheduler) {}
        usleep(UInt32.random(in: 5_000...30_000, using: &rng))
    }
    settleOneShots(world, probes)
}
