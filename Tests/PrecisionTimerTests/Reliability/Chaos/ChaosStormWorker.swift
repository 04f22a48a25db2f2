import Foundation
@testable import PrecisionTimer

/// setInterval / setNextDeadline on a timer at tick index ~3,000,000.
func stormWorker(_ world: ChaosWorld, _ scheduler: TimerScheduler, _ rng: inout SplitMix64) {
    let watchdog = world.watchdog
    var round = 0
    while world.running {
        round += 1
        let probe = RepeatProbe("chaos-storm timer #\(round)", world, checksGaps: true)
        let start = PrecisionClock.monotonic.now - .seconds(3000)
        let timer: RepeatingTimer
        do {
            timer = try scheduler.repeating(every: .milliseconds(1), startingAt: start) { probe.fired($0) }
        } catch {
            world.report.record(.violation, "chaos-storm: repeating threw \(error)")
            return
        }
        if !waitUntil(timeout: .seconds(10), { probe.fires.load(ordering: .acquiring) > 0 }) {
            world.report.record(.lost, "chaos-storm timer #\(round): its first tick (index ~3,000,000) did not "
                                + "fire within 10 s", key: "chaos-storm first tick")
        }
        let index = probe.lastIndex.load(ordering: .acquiring)
        let change = round % 2 == 1 ? "setInterval(3600 s)" : "setNextDeadline(now + 3600 s)"
        do {
            if round % 2 == 1 {
                timer.setInterval(.seconds(3600))
            } else {
                try timer.setNextDeadline(PrecisionClock.monotonic.now + .seconds(3600))
            }
        } catch {
            world.report.record(.violation, "chaos-storm: \(change) threw \(error)")
        }
        // Counted from the change's return: until the call takes the lock the
        // old 1 ms period stands, and under the signal storm this thread can
        // be held off for milliseconds before it gets there. After it, at most
        // the pending tick (setInterval keeps its deadline) and a tick
        // collected before the change can fire; a storm would be thousands.
        let before = probe.fires.load(ordering: .acquiring)
        usleep(200_000)
        let extra = probe.fires.load(ordering: .acquiring) - before
        world.maximum("storm max fires", extra)
        world.count("storm rounds")
        if extra > 3 {
            world.report.record(.storm, "\(change) on a 1 ms timer at tick index \(index): \(extra) fires "
                                + "in the next 200 ms (at most 3 allowed)", key: change)
        }
        watchdog.guarded("chaos-storm: cancel() of the timer after \(change)") { timer.cancel() }
        probe.stopped.store(true, ordering: .releasing)
        usleep(UInt32.random(in: 50_000...300_000, using: &rng))
    }
}
