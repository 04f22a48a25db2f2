import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport

/// An object that owns its own timer; the timer's handler captures it.
final class SelfOwner: Sendable {
    let timer = Locked<(any ScheduledTimer)?>(nil)
    let gone: @Sendable () -> Void

    init(gone: @escaping @Sendable () -> Void) { self.gone = gone }

    deinit {
        // Release the handle here, explicitly, then report: with the handler
        // holding the last reference to this object, this runs on the
        // scheduler thread.
        var handle = timer.withLock { t in defer { t = nil }; return t }
        handle = nil
        _ = handle
        gone()
    }
}

/// Handlers that release their own timers, and objects whose timers' handlers
/// own them; each kind on a scheduler of its own so that one deadlock does not
/// hide the others.
func ownWorker(_ world: ChaosWorld, _ schedulers: [TimerScheduler], _ rng: inout SplitMix64) {
    let watchdog = world.watchdog
    var probes: [ShotProbe] = []
    let released = LockedValue<[String: Int]>([:])  // what was released, by kind
    var expected: [String: Int] = [:]
    var serial = 0
    while world.running {
        serial += 1
        let variant = Int.random(in: 0..<4, using: &rng)
        let scheduler = schedulers[variant]
        switch variant {
        case 0:
            // A repeating timer whose handler releases its own last handle.
            let kind = "a repeating timer's handler releasing its own last handle (chaos-own-r)"
            let box = LockedValue<RepeatingTimer?>(nil)
            let after = Int.random(in: 1...5, using: &rng)
            let fires = Atomic<Int>(0)
            let op = watchdog.begin(kind, allowing: .milliseconds(Int64(after) + 5))
            let probe = RepeatProbe("chaos-own-r #\(serial)", world, checksGaps: true)
            // Signalled once this thread has let go of its own reference: the
            // handler's release is then the last one, which cancels the timer.
            let ready = DispatchSemaphore(value: 0)
            do {
                let timer = scheduler.repeating(every: .milliseconds(1)) { [box] tick in
                    probe.fired(tick)
                    guard fires.add(1, ordering: .relaxed).newValue >= after else { return }
                    ready.wait()
                    ready.signal()
                    var mine = box.withLock { b in defer { b = nil }; return b }
                    guard mine != nil else { return }
                    mine = nil
                    _ = mine
                    probe.stopped.store(true, ordering: .releasing)
                    watchdog.end(op)
                    released.withLock { $0[kind, default: 0] += 1 }
                }
                box.withLock { $0 = timer }
            }
            ready.signal()
            expected[kind, default: 0] += 1
        case 1:
            // A one-shot whose handler releases its own last handle.
            let kind = "a one-shot's handler releasing its own last handle (chaos-own-o)"
            let box = LockedValue<OneShotTimer?>(nil)
            let delay = Duration.microseconds(Int64.random(in: 200...3_000, using: &rng))
            let op = watchdog.begin(kind, allowing: delay)
            let probe = ShotProbe("chaos-own-o #\(serial)", world)
            probes.append(probe)
            let ready = DispatchSemaphore(value: 0)
            do {
                let timer = scheduler.schedule(after: delay) { [box] tick in
                    probe.fired(tick)
                    ready.wait()
                    var mine = box.withLock { b in defer { b = nil }; return b }
                    mine = nil
                    _ = mine
                    watchdog.end(op)
                    released.withLock { $0[kind, default: 0] += 1 }
                }
                box.withLock { $0 = timer }
            }
            ready.signal()
            expected[kind, default: 0] += 1
        case 2:
            // An object owning a one-shot whose handler captures it and ends the
            // timer (a fired one-shot keeps its handler for a reschedule until
            // then): the object is released on the scheduler thread.
            let kind = "an object owning a one-shot whose handler captures it and ends it, released on the "
                + "scheduler thread after the fire (chaos-own-c)"
            let delay = Duration.microseconds(Int64.random(in: 200...3_000, using: &rng))
            let op = watchdog.begin(kind, allowing: delay)
            let probe = ShotProbe("chaos-own-c #\(serial)", world)
            probes.append(probe)
            let owner = SelfOwner {
                watchdog.end(op)
                released.withLock { $0[kind, default: 0] += 1 }
            }
            let timer = scheduler.schedule(after: delay) { [owner] tick in
                probe.fired(tick)
                withExtendedLifetime(owner) {}
                tick.cancelTimer()
            }
            owner.timer.withLock { $0 = timer }
            expected[kind, default: 0] += 1
        default:
            // An object owning a repeating timer whose handler captures it and
            // cancels the timer from inside (tick.cancelTimer()).
            let kind = "an object owning a repeating timer whose handler captures it and calls "
                + "cancelTimer() (chaos-own-d)"
            let after = Int64.random(in: 0...4, using: &rng)
            let op = watchdog.begin(kind, allowing: .milliseconds(after + 5))
            let probe = RepeatProbe("chaos-own-d #\(serial)", world, checksGaps: true)
            let owner = SelfOwner {
                watchdog.end(op)
                released.withLock { $0[kind, default: 0] += 1 }
            }
            let timer = scheduler.repeating(every: .milliseconds(1)) { [owner] tick in
                probe.fired(tick)
                withExtendedLifetime(owner) {}
                if tick.index >= after && !tick.isManual { tick.cancelTimer() }
            }
            owner.timer.withLock { $0 = timer }
            expected[kind, default: 0] += 1
        }
        usleep(UInt32.random(in: 1_000...10_000, using: &rng))
    }
    settleOneShots(world, probes)
    // Every object released (its handle with it), every handler chain finished.
    _ = waitUntil(timeout: .seconds(5)) {
        released.withLock { r in expected.allSatisfy { r[$0.key, default: 0] >= $0.value } }
    }
    let done = released.withLock { $0 }
    for (kind, n) in expected.sorted(by: { $0.key < $1.key }) {
        world.count("own: \(kind.split(separator: "(").last.map { "(" + $0 } ?? kind)", n)
        if done[kind, default: 0] < n {
            world.report.record(.leak, "\(kind): \(n - done[kind, default: 0]) of \(n) never finished releasing")
        }
    }
}
