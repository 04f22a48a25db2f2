import Dispatch
import Foundation
@testable import PrecisionTimer

/// Random one-shots and repeating timers on one scheduler, used from this thread.
func opsWorker(_ world: ChaosWorld, _ scheduler: TimerScheduler, id: Int, _ rng: inout SplitMix64) {
    let queue = DispatchQueue(label: "chaos.ops-\(id)")
    var shots: [(timer: OneShotTimer?, probe: ShotProbe)] = []
    var repeats: [(timer: RepeatingTimer?, probe: RepeatProbe)] = []
    var allShots: [ShotProbe] = []
    var serial = 0
    let watchdog = world.watchdog
    while world.running {
        serial += 1
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<30:
            let probe = ShotProbe("chaos-main one-shot #\(id).\(serial)", world)
            let deadline = PrecisionClock.monotonic.now + .microseconds(Int64.random(in: -100...5_000, using: &rng))
            let delivery: TimerDelivery = Int.random(in: 0..<4, using: &rng) == 0 ? .queue(queue) : .inline
            let timer = scheduler.schedule(at: deadline, leeway: .microseconds(Int64.random(in: 0...500, using: &rng)),
                                               delivery: delivery) { probe.fired($0) }
            shots.append((timer, probe))
            allShots.append(probe)
        case 30..<40:
            let skip = Int.random(in: 0..<3, using: &rng) != 0
            let probe = RepeatProbe("chaos-main repeating #\(id).\(serial)", world, checksGaps: skip)
            let timer = scheduler.repeating(
                every: .microseconds(Int64.random(in: 200...5_000, using: &rng)),
                leeway: .microseconds(Int64.random(in: 0...300, using: &rng)), policy: skip ? .skip : .burst
            ) { probe.fired($0) }
            repeats.append((timer, probe))
        case 40..<52:
            guard let i = shots.indices.randomElement(using: &rng) else { break }
            watchdog.guarded("chaos-main: cancel() of a one-shot") { shots[i].timer?.cancel() }
            shots[i].probe.stopped.store(true, ordering: .releasing)
        case 52..<58:
            guard let i = repeats.indices.randomElement(using: &rng) else { break }
            watchdog.guarded("chaos-main: cancel() of a repeating timer") { repeats[i].timer?.cancel() }
            repeats[i].probe.stopped.store(true, ordering: .releasing)
        case 58..<66:
            if Bool.random(using: &rng), let i = shots.indices.randomElement(using: &rng) {
                let t = shots[i].timer
                if t?.isSuspended == true { t?.resume() } else { t?.suspend() }
            } else if let i = repeats.indices.randomElement(using: &rng) {
                let t = repeats[i].timer
                if t?.isSuspended == true { t?.resume() } else { t?.suspend() }
            }
        case 66..<72:
            if Bool.random(using: &rng), let i = shots.indices.randomElement(using: &rng) {
                shots[i].timer?.fire()
            } else if let i = repeats.indices.randomElement(using: &rng) {
                repeats[i].timer?.fire()
            }
        case 72..<84:
            if Bool.random(using: &rng), let i = shots.indices.randomElement(using: &rng) {
                var entry = shots.remove(at: i)
                watchdog.guarded("chaos-main: release of a one-shot handle") { entry.timer = nil }
                entry.probe.markReleased()
            } else if let i = repeats.indices.randomElement(using: &rng) {
                var entry = repeats.remove(at: i)
                watchdog.guarded("chaos-main: release of a repeating handle") { entry.timer = nil }
                entry.probe.markReleased()
            }
        default:
            usleep(UInt32.random(in: 0..<300, using: &rng))
        }
        // Forget fired one-shots (their probes stay for the final check) and
        // keep at most 16 repeating timers.
        if shots.count > 64 {
            watchdog.guarded("chaos-main: release of fired one-shot handles") {
                shots.removeAll { $0.probe.settled }
            }
        }
        if repeats.count > 16 {
            var entry = repeats.removeFirst()
            watchdog.guarded("chaos-main: release of a repeating handle") { entry.timer = nil }
            entry.probe.markReleased()
        }
    }
    // Suspended one-shots go back so that "fires once unless cancelled" holds.
    for entry in shots where entry.timer?.isSuspended == true { entry.timer?.resume() }
    settleOneShots(world, allShots)
    watchdog.guarded("chaos-main: release of every handle at the end") {
        shots.removeAll()
        repeats.removeAll()
    }
    world.count("chaos-main one-shots", allShots.count)
}
