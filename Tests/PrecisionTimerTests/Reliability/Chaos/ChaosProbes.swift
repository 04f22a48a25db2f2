import Foundation
@testable import PrecisionTimer
import Synchronization

/// A one-shot's fires: exactly one unless cancelled, never early.
final class ShotProbe: Sendable {
    let name: String
    let world: ChaosWorld
    /// Set once `cancel()` has returned: no handler call may start after it.
    let stopped = Atomic<Bool>(false)
    let fires = Atomic<Int>(0)
    /// The fire count when the release of the last handle returned (-1: not
    /// released). A release does not wait for a running call: at most that one
    /// call may still be counted after it, none may start.
    let releaseMark = Atomic<Int>(-1)

    func markReleased() {
        releaseMark.store(fires.load(ordering: .acquiring), ordering: .releasing)
    }

    init(_ name: String, _ world: ChaosWorld) {
        self.name = name
        self.world = world
    }

    func fired(_ tick: Tick) {
        let now = PrecisionClock.monotonic.now
        if stopped.load(ordering: .acquiring) {
            world.report.record(.violation, "\(name): fired after cancel returned")
        }
        if !tick.isManual && (tick.firedAt < tick.deadline || now < tick.deadline) {
            world.report.record(.early, "\(name): deadline \(tick.deadline.nanoseconds), firedAt "
                                + "\(tick.firedAt.nanoseconds), clock in handler \(now.nanoseconds)")
        }
        let n = fires.add(1, ordering: .acquiringAndReleasing).newValue
        if n > 1 {
            world.report.record(.violation, "\(name): a one-shot fired twice")
        }
        let mark = releaseMark.load(ordering: .acquiring)
        if mark >= 0 && n > mark + 1 {
            world.report.record(.violation, "\(name): fired after the release of its handle returned")
        }
        world.count("one-shot fires")
    }

    var settled: Bool {
        stopped.load(ordering: .acquiring) || releaseMark.load(ordering: .acquiring) >= 0
            || fires.load(ordering: .acquiring) > 0
    }
}

/// A repeating timer's ticks: never early, indices strictly rising, and with
/// the skip policy `missed` counting exactly the grid ticks jumped over.
final class RepeatProbe: Sendable {
    let name: String
    let world: ChaosWorld
    let checksGaps: Bool
    let stopped = Atomic<Bool>(false)
    let fires = Atomic<Int>(0)
    let lastIndex = Atomic<Int>(-1)
    /// As ``ShotProbe/releaseMark``.
    let releaseMark = Atomic<Int>(-1)

    func markReleased() {
        releaseMark.store(fires.load(ordering: .acquiring), ordering: .releasing)
    }

    init(_ name: String, _ world: ChaosWorld, checksGaps: Bool) {
        self.name = name
        self.world = world
        self.checksGaps = checksGaps
    }

    func fired(_ tick: Tick) {
        let now = PrecisionClock.monotonic.now
        if stopped.load(ordering: .acquiring) {
            world.report.record(.violation, "\(name): ticked after cancel returned")
        }
        let n = fires.add(1, ordering: .acquiringAndReleasing).newValue
        let mark = releaseMark.load(ordering: .acquiring)
        if mark >= 0 && n > mark + 1 {
            world.report.record(.violation, "\(name): ticked twice after the release of its handle returned")
        }
        world.count("repeating fires")
        guard !tick.isManual else { return }
        if tick.firedAt < tick.deadline || now < tick.deadline {
            world.report.record(.early, "\(name): tick \(tick.index) deadline \(tick.deadline.nanoseconds), "
                                + "firedAt \(tick.firedAt.nanoseconds), clock in handler \(now.nanoseconds)")
        }
        let previous = lastIndex.exchange(tick.index, ordering: .acquiringAndReleasing)
        if tick.index <= previous {
            world.report.record(.violation, "\(name): tick \(tick.index) after tick \(previous)")
        } else if checksGaps && tick.index != previous &+ 1 &+ tick.missed {
            world.report.record(.violation, "\(name): tick \(tick.index) after \(previous) reports "
                                + "\(tick.missed) missed")
        }
    }
}

/// Waits (bounded) for one-shots not cancelled to fire; each still unfired is lost.
func settleOneShots(_ world: ChaosWorld, _ probes: [ShotProbe], timeout: Duration = .seconds(5)) {
    _ = waitUntil(timeout: timeout) { probes.allSatisfy(\.settled) }
    for probe in probes where !probe.settled {
        world.report.record(.lost, "\(probe.name): not fired \(timeout) after the run",
                            key: probe.name.split(separator: "#").first.map(String.init) ?? probe.name)
    }
}

/// Results of one consumer task.
final class TaskProbe: Sendable {
    let done = Atomic<Bool>(false)
    let cancelledByUs = Atomic<Bool>(false)
    let outcome = Locked<String>("running")
}
