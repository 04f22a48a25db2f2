@testable import PrecisionTimer
import Foundation
import Synchronization

/// A one-shot re-armed under chaos, as an idle timeout is pushed back at each
/// read: sometimes long before its deadline, sometimes while the scheduler
/// already spins toward it (its fire collected), sometimes after it fired (it
/// then fires again). What must hold whatever the race:
/// - never early, for the deadline each fire was for;
/// - every fire is for a deadline that was set, and no deadline fires twice;
/// - after the last re-arm the timer fires for the last deadline, once, and
///   that is its last fire.
final class RearmProbe: Sendable {
    let name: String
    let world: ChaosWorld
    /// Every deadline the timer was armed for (recorded before the re-arm).
    private let armed = Locked<Set<Int64>>([])
    /// The deadline of each fire, in order.
    private let fires = Locked<[Int64]>([])

    init(_ name: String, _ world: ChaosWorld) {
        self.name = name
        self.world = world
    }

    func arming(_ deadline: Int64) { armed.withLock { _ = $0.insert(deadline) } }

    func fired(_ tick: Tick) {
        let now = PrecisionClock.monotonic.now
        let deadline = tick.deadline.nanoseconds
        if tick.firedAt < tick.deadline || now < tick.deadline {
            world.report.record(.early, "\(name): deadline \(deadline), firedAt \(tick.firedAt.nanoseconds), "
                                + "clock in handler \(now.nanoseconds)")
        }
        if !armed.withLock({ $0.contains(deadline) }) {
            world.report.record(.violation, "\(name): fired for \(deadline), a deadline never set")
        }
        let twice = fires.withLock { f -> Bool in
            defer { f.append(deadline) }
            return f.contains(deadline)
        }
        if twice { world.report.record(.violation, "\(name): fired twice for deadline \(deadline)") }
        world.count("re-armed one-shot fires")
    }

    var lastFire: Int64? { fires.withLock { $0.last } }
}

func rearmWorker(_ world: ChaosWorld, _ scheduler: TimerScheduler, _ rng: inout SplitMix64) {
    let watchdog = world.watchdog
    var serial = 0
    func random(_ range: ClosedRange<Int64>, _ rng: inout SplitMix64) -> Int64 {
        range.lowerBound + Int64(rng.next() % UInt64(range.upperBound - range.lowerBound + 1))
    }
    while world.running {
        serial += 1
        let probe = RearmProbe("chaos-rearm #\(serial)", world)
        var deadline = monoNow() + random(200_000...2_000_000, &rng)
        probe.arming(deadline)
        let timer = scheduler.schedule(at: .init(nanoseconds: deadline)) { probe.fired($0) }
        for _ in 0..<(1 + rng.next() % 6) {
            // Pause until some moment around the pending deadline: before it,
            // inside the spin that precedes it, or after it has fired.
            let target = deadline + random(-600_000...300_000, &rng)
            while monoNow() < target { usleep(UInt32(max(1, min(200, (target - monoNow()) / 1_000)))) }
            deadline = max(deadline + 1_000, monoNow() + random(0...2_000_000, &rng))
            probe.arming(deadline)
            watchdog.guarded("re-arm of a one-shot (chaos-rearm)") {
                timer.reschedule(at: .init(nanoseconds: deadline))
            }
            world.count("one-shot re-arms")
        }
        let last = deadline
        let op = watchdog.begin("a re-armed one-shot never fired for its last deadline (chaos-rearm)",
                                allowing: .nanoseconds(max(0, last - monoNow())))
        let firedLast = waitUntil(timeout: .seconds(5)) { probe.lastFire == last }
        watchdog.end(op)
        if !firedLast {
            world.report.record(.lost, "\(probe.name): no fire for its last deadline 5 s after it",
                                key: "chaos-rearm")
        } else {
            usleep(2_000)  // a fire after the last one would show here
            if probe.lastFire != last {
                world.report.record(.violation, "\(probe.name): fired again after its last deadline")
            }
            if !timer.hasFired {
                world.report.record(.violation, "\(probe.name): hasFired false after its last fire")
            }
        }
        watchdog.guarded("release of a re-armed one-shot (chaos-rearm)") { withExtendedLifetime(timer) {} }
    }
}
