import CMonoClock
import Dispatch
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport
import XCTest

/// Hostile use of one scheduler from many threads at once.
///
/// Off by default (it takes as long as you ask). Run it with
///
///     PRECISIONTIMER_STRESS_SECONDS=30 swift test --filter StressTests
///
/// (`PRECISIONTIMER_STRESS_THREADS` changes the thread count, default 8;
/// `PRECISIONTIMER_STRESS_SEED` replays a run). CI runs it for a few seconds,
/// also under ThreadSanitizer and AddressSanitizer.
///
/// Each thread schedules, cancels, suspends, resumes, fires and drops timers at
/// random: one-shots, repeating timers (every missed-tick policy, inline and
/// queue delivery), weak-owner timers and registry tasks. Handlers cancel their
/// own timer, cancel other timers and schedule new ones from the scheduler
/// thread. Checked:
/// - no handler starts after `cancel()` (or the registry's cancel/replace)
///   returned on another thread; after a release of the handle or a cancel
///   from inside a handler (neither waits), at most the call already running;
/// - no tick fires early, no repeating tick fires twice (indices strictly rise),
///   no one-shot fires twice;
/// - every one-shot that was not cancelled fires exactly once;
/// - at the end no timer is live, no timer node and no timer handle is left
///   alive, and every object a handler captured has been released (counted).
final class StressTests: XCTestCase {
    func testManyThreadsAgainstOneScheduler() throws {
        let env = ProcessInfo.processInfo.environment
        let seconds = try secondsToRun("the stress test", from: "PRECISIONTIMER_STRESS_SECONDS")
        let threads = env["PRECISIONTIMER_STRESS_THREADS"].flatMap(Int.init) ?? 8
        let seed = seedToRun(from: "PRECISIONTIMER_STRESS_SEED")
        let nodesBefore = TimerNode.instances.load(ordering: .relaxed)

        let world = StressWorld(scheduler: try TimerScheduler(options: .init(name: "stress")))
        let end = PrecisionClock.monotonic.now + .nanoseconds(Int64(seconds * 1e9))
        let done = DispatchGroup()
        let results = LockedValue<[Worker.Result]>([])
        for t in 0..<threads {
            done.enter()
            let thread = Thread {
                var worker = Worker(id: t, world: world, seed: seed &+ UInt64(t) &* 0x9E37_79B9_7F4A_7C15)
                let result = worker.run(until: end)
                results.withLock { $0.append(result) }
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        // A deadlock must fail the test, not hang CI.
        guard done.wait(timeout: .now() + seconds + 120) == .success else {
            XCTFail("stress workers did not finish 120 s after their end (seed \(seed)): deadlock?")
            return
        }

        // Every one-shot not cancelled must fire exactly once.
        var expected = results.withLock { $0.flatMap(\.pendingOneShots) } + world.children.withLock { $0 }
        let settled = waitUntil(timeout: .seconds(60)) {
            expected.allSatisfy { $0.probe.isStopped || $0.probe.fires.load(ordering: .acquiring) >= 1 }
        }
        XCTAssertTrue(settled, "one-shots still pending 60 s after the run (seed \(seed))")
        var oneShotsChecked = 0
        for slot in expected where !slot.probe.isStopped {
            oneShotsChecked += 1
            let state = (slot.handle as? OneShotTimer).map {
                "suspended \($0.isSuspended) cancelled \($0.isCancelled) fired \($0.hasFired) deadline \($0.deadline.nanoseconds), now \(PrecisionClock.monotonic.now.nanoseconds)"
            } ?? "registry \(slot.registryKey.map { "\($0) contains \(world.registry.contains($0))" } ?? "-")"
            XCTAssertEqual(slot.probe.fires.load(ordering: .acquiring), 1, "a one-shot did not fire exactly once: \(state)")
        }

        // Tear down: release every handle, cancel every registry task.
        expected = []
        let handles = results.withLock { $0.flatMap(\.weakHandles) } + world.weakHandles.withLock { $0 }
        var finished = results.withLock { r in defer { r = [] }; return r }
        for i in finished.indices { finished[i].releaseAll() }
        world.registry.cancelAll()
        // Take the handles out of the locks before dropping them: releasing a
        // timer waits for its running handler (cancel is synchronous), and a
        // handler may be waiting for one of these locks.
        var leftovers = world.children.withLock { slots in defer { slots = [] }; return slots }
        leftovers += world.victims.withLock { slots in defer { slots = [] }; return slots }
        leftovers.removeAll()
        // Handlers may still be running on the delivery queue; cancel waited for
        // them, so the engine must be empty now.
        XCTAssertTrue(waitUntil(timeout: .seconds(10)) { world.scheduler.statistics.liveTimers == 0 },
                      "\(world.scheduler.statistics.liveTimers) timers still live")
        world.deliveryQueue.sync {}
        XCTAssertTrue(waitUntil(timeout: .seconds(10)) { world.census.live.load(ordering: .acquiring) == 0 },
                      "\(world.census.live.load(ordering: .acquiring)) captured objects still alive")
        XCTAssertEqual(handles.filter { $0.handle != nil }.count, 0, "timer handles still alive")
        XCTAssertTrue(waitUntil(timeout: .seconds(10)) {
            TimerNode.instances.load(ordering: .relaxed) == nodesBefore
        }, "\(TimerNode.instances.load(ordering: .relaxed) - nodesBefore) timer nodes still alive")

        let violations = world.violations.withLock { $0 }
        XCTAssertEqual(violations.count, 0, "seed \(seed): " + violations.prefix(10).joined(separator: "; "))

        let ops = finished.reduce(into: [String: Int]()) { acc, r in acc.merge(r.operations, uniquingKeysWith: +) }
        let stats = world.scheduler.statistics
        print("""
            stress: \(threads) threads × \(seconds) s, seed \(seed): \
            \(world.census.created.load(ordering: .relaxed)) timers/tasks created, \
            \(stats.fires) handler calls, \(stats.wakeups) wake-ups, \
            \(oneShotsChecked) one-shots fired exactly once, \(violations.count) violations; \
            operations: \(ops.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            """)
    }
}

// MARK: - The shared world

/// Counts objects captured by handlers.
final class Census: Sendable {
    let live = Atomic<Int>(0)
    let created = Atomic<Int>(0)
}

/// Something a handler captures; counted while alive.
final class Captured: Sendable {
    let census: Census
    init(_ census: Census) {
        self.census = census
        census.live.add(1, ordering: .relaxed)
        census.created.add(1, ordering: .relaxed)
    }
    deinit { census.live.subtract(1, ordering: .relaxed) }
}

/// A weak-owner timer's owner.
final class StressOwner: Sendable {
    let captured: Captured
    init(_ census: Census) { captured = Captured(census) }
}

/// What one timer's handler saw.
final class Probe: Sendable {
    let oneShot: Bool
    let clock: PrecisionClock
    let world: StressWorld
    /// Set once `cancel()` has returned on an ordinary thread: from then on the
    /// handler must never start.
    let stopped = Atomic<Bool>(false)
    let fires = Atomic<Int>(0)
    let lastIndex = Atomic<Int>(-1)
    /// Handler calls so far, and their number when a cancel that does not wait
    /// returned (a release, or a cancel from inside another handler; -1: none).
    /// After it, at most the one call already running may still check in.
    let calls = Atomic<Int>(0)
    let releaseMark = Atomic<Int>(-1)

    /// Records a cancel that does not wait for a running call.
    func markReleased() {
        releaseMark.store(calls.load(ordering: .acquiring), ordering: .releasing)
    }

    /// Whether the timer was stopped, by either kind of cancel.
    var isStopped: Bool { stopped.load(ordering: .acquiring) || releaseMark.load(ordering: .acquiring) >= 0 }

    init(oneShot: Bool, clock: PrecisionClock = .monotonic, world: StressWorld) {
        self.oneShot = oneShot
        self.clock = clock
        self.world = world
    }

    /// Called first in every handler.
    func check(_ tick: Tick) {
        if stopped.load(ordering: .acquiring) {
            world.violation("handler ran after cancel returned (tick \(tick.index), manual \(tick.isManual))")
        }
        let n = calls.add(1, ordering: .acquiringAndReleasing).newValue
        let mark = releaseMark.load(ordering: .acquiring)
        if mark >= 0 && n > mark + 1 {
            world.violation("handler started after a release returned (tick \(tick.index), manual \(tick.isManual))")
        }
        // fire() on a one-shot is its one fire (early by request); on a
        // repeating timer it is an extra call off the grid.
        if oneShot && tick.isManual {
            if fires.add(1, ordering: .acquiringAndReleasing).newValue > 1 { world.violation("a one-shot fired twice") }
            return
        }
        guard !tick.isManual else { return }
        let now = clock.now
        if now < tick.deadline || tick.firedAt < tick.deadline {
            world.violation("early fire: deadline \(tick.deadline.nanoseconds), firedAt \(tick.firedAt.nanoseconds), now \(now.nanoseconds)")
        }
        if oneShot {
            if fires.add(1, ordering: .acquiringAndReleasing).newValue > 1 { world.violation("a one-shot fired twice") }
        } else {
            fires.add(1, ordering: .relaxed)
            let previous = lastIndex.exchange(tick.index, ordering: .acquiringAndReleasing)
            if tick.index <= previous { world.violation("tick \(tick.index) after tick \(previous): fired twice") }
        }
    }
}

/// A handle and its probe.
struct Slot: Sendable {
    var handle: (any ScheduledTimer)?
    let probe: Probe
    var ownerRef: StressOwner?
    var registryKey: TaskRegistry.Key?
}

/// A weak reference to a timer handle, to count survivors at the end.
struct WeakHandle: Sendable {
    weak var handle: (any ScheduledTimer)?
}

final class StressWorld: Sendable {
    let scheduler: TimerScheduler
    let registry: TaskRegistry
    let census = Census()
    let deliveryQueue = DispatchQueue(label: "stress.delivery")
    /// One-shots scheduled from inside handlers.
    let children = Locked<[Slot]>([])
    /// Timers handed over for handlers to cancel.
    let victims = Locked<[Slot]>([])
    let weakHandles = Locked<[WeakHandle]>([])
    let violations = Locked<[String]>([])

    init(scheduler: TimerScheduler) {
        self.scheduler = scheduler
        registry = TaskRegistry(scheduler: scheduler)
    }

    func violation(_ message: String) {
        violations.withLock { if $0.count < 100 { $0.append(message) } }
    }

    /// From inside a handler (the scheduler thread): schedule a one-shot child.
    func spawnChild(delayMicroseconds: Int64) {
        let probe = Probe(oneShot: true, world: self)
        let captured = Captured(census)
        let timer = scheduler.schedule(after: .microseconds(delayMicroseconds)) { tick in
            probe.check(tick)
            withExtendedLifetime(captured) {}
        }
        weakHandles.withLock { $0.append(WeakHandle(handle: timer)) }
        children.withLock { $0.append(Slot(handle: timer, probe: probe)) }
    }

    /// From inside a handler: cancel a timer another thread handed over.
    func cancelAVictim() {
        guard var slot = victims.withLock({ $0.popLast() }) else { return }
        slot.handle?.cancel()  // inside a handler: returns without waiting
        slot.probe.markReleased()
        slot.handle = nil
    }
}

// MARK: - A worker thread

struct Worker {
    struct Result: Sendable {
        var slots: [Slot]
        var operations: [String: Int]
        var weakHandles: [WeakHandle]
        var pendingOneShots: [Slot] { slots.filter { $0.probe.oneShot && ($0.handle != nil || $0.registryKey != nil) } }

        mutating func releaseAll() {
            for i in slots.indices {
                slots[i].handle = nil
                slots[i].probe.markReleased()
                slots[i].ownerRef = nil
            }
            slots.removeAll()
        }
    }

    let id: Int
    let world: StressWorld
    var rng: SplitMix64
    var slots: [Slot] = []
    var keyProbes: [TaskRegistry.Key: Probe] = [:]
    var operations: [String: Int] = [:]
    var weakHandles: [WeakHandle] = []

    init(id: Int, world: StressWorld, seed: UInt64) {
        self.id = id
        self.world = world
        rng = SplitMix64(seed: seed)
    }

    mutating func count(_ op: String) { operations[op, default: 0] += 1 }

    mutating func run(until end: PrecisionClock.Instant) -> Result {
        while PrecisionClock.monotonic.now < end {
            step()
            if slots.count > 64 { dropRandom() }
        }
        // Suspended one-shots are resumed so that "fires once unless cancelled" is checkable.
        for slot in slots where slot.probe.oneShot { slot.handle?.resume() }
        // Registry one-shots still in the registry must fire too.
        return Result(slots: slots, operations: operations, weakHandles: weakHandles)
    }

    mutating func step() {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<18: scheduleOneShot()
        case 18..<30: scheduleRepeating()
        case 30..<36: scheduleWeakOwner()
        case 36..<46: scheduleRegistryTask()
        case 46..<56: cancelRandom()
        case 56..<64: suspendOrResumeRandom()
        case 64..<70: fireRandom()
        case 70..<80: dropRandom()
        case 80..<84: handOverVictim()
        case 84..<88: cancelRegistryKey()
        default: usleep(UInt32.random(in: 0..<200, using: &rng))
        }
    }

    mutating func remember(_ slot: Slot) {
        if let handle = slot.handle { weakHandles.append(WeakHandle(handle: handle)) }
        slots.append(slot)
    }

    mutating func scheduleOneShot() {
        let probe = Probe(oneShot: true, world: world)
        let captured = Captured(world.census)
        let spawns = Int.random(in: 0..<10, using: &rng) == 0
        let delay = Int64.random(in: -100...3_000, using: &rng)
        let leeway = Duration.microseconds(Int64.random(in: 0...500, using: &rng))
        let world = self.world
        let timer = world.scheduler.schedule(after: .microseconds(delay), leeway: leeway) { tick in
            probe.check(tick)
            if spawns { world.spawnChild(delayMicroseconds: 500) }
            withExtendedLifetime(captured) {}
        }
        remember(Slot(handle: timer, probe: probe))
        count("schedule one-shot")
    }

    mutating func scheduleRepeating() {
        let probe = Probe(oneShot: false, world: world)
        let captured = Captured(world.census)
        let interval = Duration.microseconds(Int64.random(in: 200...5_000, using: &rng))
        let policy = [MissedTickPolicy.skip, .burst, .delay].randomElement(using: &rng)!
        let onQueue = Int.random(in: 0..<4, using: &rng) == 0
        let selfCancelAfter = Int.random(in: 0..<4, using: &rng) == 0 ? Int64.random(in: 0...20, using: &rng) : -1
        let cancelsOthers = !onQueue && Int.random(in: 0..<8, using: &rng) == 0
        let world = self.world
        let timer = world.scheduler.repeating(
            every: interval, leeway: .microseconds(Int64.random(in: 0...300, using: &rng)), policy: policy,
            delivery: onQueue ? .queue(world.deliveryQueue) : .inline
        ) { tick in
            probe.check(tick)
            if selfCancelAfter >= 0 && tick.index >= selfCancelAfter { tick.cancelTimer() }
            if cancelsOthers && tick.index % 4 == 0 { world.cancelAVictim() }
            withExtendedLifetime(captured) {}
        }
        remember(Slot(handle: timer, probe: probe))
        count(onQueue ? "schedule repeating (queue)" : "schedule repeating")
    }

    mutating func scheduleWeakOwner() {
        let probe = Probe(oneShot: false, world: world)
        let owner = StressOwner(world.census)
        let timer = world.scheduler.repeating(
            every: .microseconds(Int64.random(in: 300...3_000, using: &rng)), owner: owner
        ) { owner, tick in
            probe.check(tick)
            withExtendedLifetime(owner.captured) {}
        }
        // Half keep the owner (until dropped); half let it die at once: the
        // timer must stop by itself within a tick.
        let keepOwner = Bool.random(using: &rng)
        remember(Slot(handle: timer, probe: probe, ownerRef: keepOwner ? owner : nil))
        count("schedule weak-owner")
    }

    mutating func scheduleRegistryTask() {
        let key = TaskRegistry.Key("w\(id)-k\(Int.random(in: 0..<6, using: &rng))")
        let repeats = Bool.random(using: &rng)
        let probe = Probe(oneShot: !repeats, world: world)
        let captured = Captured(world.census)
        let started = PrecisionClock.monotonic.now
        let delay = Duration.microseconds(Int64.random(in: 0...2_000, using: &rng))
        world.registry.schedule(
            key, after: delay, repeating: repeats ? .microseconds(Int64.random(in: 500...3_000, using: &rng)) : nil
        ) {
            // Registry tasks get no Tick: check "after cancel" and "early" by hand.
            if probe.stopped.load(ordering: .acquiring) {
                probe.world.violation("registry task ran after cancel/replace returned")
            }
            if !repeats {
                if PrecisionClock.monotonic.now < started + delay { probe.world.violation("registry task early") }
                if probe.fires.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    probe.world.violation("registry one-shot ran twice")
                }
            }
            withExtendedLifetime(captured) {}
        }
        // The task this key held before was cancelled synchronously.
        keyProbes[key]?.stopped.store(true, ordering: .releasing)
        keyProbes[key] = probe
        if !repeats {
            // A one-shot task must run once unless replaced or cancelled.
            slots.append(Slot(handle: nil, probe: probe, registryKey: key))
        }
        count("registry schedule")
    }

    mutating func cancelRegistryKey() {
        let key = TaskRegistry.Key("w\(id)-k\(Int.random(in: 0..<6, using: &rng))")
        world.registry.cancel(key)
        keyProbes[key]?.stopped.store(true, ordering: .releasing)
        count("registry cancel")
    }

    mutating func randomIndex() -> Int? {
        let live = slots.indices.filter { slots[$0].handle != nil }
        return live.randomElement(using: &rng)
    }

    mutating func cancelRandom() {
        guard let i = randomIndex() else { return }
        slots[i].handle?.cancel()
        slots[i].probe.stopped.store(true, ordering: .releasing)
        count("cancel")
    }

    mutating func suspendOrResumeRandom() {
        guard let i = randomIndex(), let handle = slots[i].handle else { return }
        if handle.isSuspended {
            handle.resume()
            count("resume")
        } else {
            handle.suspend()
            count("suspend")
        }
    }

    mutating func fireRandom() {
        guard let i = randomIndex() else { return }
        slots[i].handle?.fire()
        count("fire")
    }

    mutating func dropRandom() {
        guard !slots.isEmpty else { return }
        let i = Int.random(in: slots.indices, using: &rng)
        var slot = slots.remove(at: i)
        guard slot.handle != nil else {
            // A registry one-shot or a cancelled timer: keep one-shots for the final check.
            if slot.registryKey != nil || slot.probe.oneShot { slots.append(slot) }
            return
        }
        slot.handle = nil  // the last strong reference: releasing it cancels the timer
        slot.probe.markReleased()
        slot.ownerRef = nil
        count("drop")
    }

    mutating func handOverVictim() {
        guard let i = randomIndex() else { return }
        let slot = slots.remove(at: i)
        guard !slot.probe.oneShot else {
            slots.append(slot)
            return
        }
        world.victims.withLock { $0.append(slot) }
        count("hand over to a handler")
    }
}
