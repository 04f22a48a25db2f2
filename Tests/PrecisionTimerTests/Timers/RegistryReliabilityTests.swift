@testable import PrecisionTimer
import Synchronization
import XCTest

/// TaskRegistry's keys and its schedule/replace races.
final class RegistryReliabilityTests: XCTestCase {
    /// A key the registry makes up (`task-N`) and a key of yours that happens
    /// to be named `task-N` are different keys: neither replaces the other.
    func testGeneratedKeysDoNotShareTheNamespaceOfUserKeys() throws {
        let clock = VirtualClock()
        let registry = TaskRegistry(scheduler: TimerScheduler(clock: clock))
        let log = Recorder<String>()

        // A user key named like the generated key that already exists.
        let anonymous1 = registry.schedule(after: .milliseconds(10)) { log.append("anonymous 1") }
        XCTAssertEqual(anonymous1.name, "task-1")
        let user1 = registry.schedule(TaskRegistry.Key(anonymous1.name), after: .milliseconds(10)) {
            log.append("user task-1")
        }
        XCTAssertNotEqual(user1, anonymous1, "a user key is not a generated key of the same name")
        XCTAssertEqual(registry.count, 2, "the user key replaced the anonymous task")

        // A generated key named like a user key that already exists: the third
        // schedule below uses id 3, so the next anonymous one would be `task-4`.
        registry.schedule("task-4", after: .milliseconds(10)) { log.append("user task-4") }
        let anonymous4 = registry.schedule(after: .milliseconds(10)) { log.append("anonymous 4") }
        XCTAssertEqual(anonymous4.name, "task-4")
        XCTAssertEqual(registry.count, 4, "the anonymous task replaced the user's task-4")
        XCTAssertTrue(registry.contains("task-4"))
        XCTAssertTrue(registry.contains(anonymous4))

        clock.advance(by: .milliseconds(10))
        XCTAssertEqual(Set(log.all), ["anonymous 1", "user task-1", "user task-4", "anonymous 4"])
        XCTAssertEqual(registry.count, 0)

        // Cancelling by a user key leaves the generated one of the same name alone.
        let anonymous = registry.schedule(after: .milliseconds(10)) { log.append("anonymous again") }
        XCTAssertFalse(registry.cancel(TaskRegistry.Key(anonymous.name)))
        XCTAssertTrue(registry.contains(anonymous))
        XCTAssertEqual(anonymous.description, anonymous.name, "the generated key still reads task-N")
        XCTAssertTrue(registry.cancel(anonymous))
    }

    /// A `schedule` that replaces a task whose run is under way waits for that
    /// run to end, with the new task recorded and not yet started. A
    /// `reschedule` of the key meanwhile moves the new task (it returns true),
    /// and the new task then runs at the moved deadline, not at its first.
    func testRescheduleWhileAScheduleWaitsForTheReplacedRunMovesTheNewTask() throws {
        let scheduler = try TimerScheduler(options: .init(name: "registry-reschedule"))
        let registry = TaskRegistry(scheduler: scheduler)
        let queue = DispatchQueue(label: "registry-reschedule")
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let once = Atomic<Bool>(false)
        registry.schedule("k", after: .zero, repeating: .seconds(60), on: .queue(queue)) {
            guard !once.exchange(true, ordering: .relaxed) else { return }
            running.signal()
            release.wait()  // the replaced task's run lasts until the test lets it end
        }
        XCTAssertEqual(running.wait(timeout: .now() + 10), .success, "the first task did not run")

        let newRan = Mutex<PrecisionClock.Instant?>(nil)
        let replaced = DispatchSemaphore(value: 0)
        let replacer = Thread {
            registry.schedule("k", after: .milliseconds(20)) { newRan.withLock { $0 = PrecisionClock.monotonic.now } }
            replaced.signal()
        }
        replacer.start()
        // The replacing `schedule` records its task at once, then waits in the
        // cancel of the running one.
        usleep(200_000)
        XCTAssertEqual(replaced.wait(timeout: .now()), .timedOut, "the schedule did not wait for the replaced run")
        XCTAssertTrue(registry.contains("k"))
        let movedAt = PrecisionClock.monotonic.now
        XCTAssertTrue(registry.reschedule("k", after: .milliseconds(400)),
                      "a recorded task, not cancelled and not run, was not there to move")
        release.signal()
        XCTAssertEqual(replaced.wait(timeout: .now() + 10), .success)

        let t0 = PrecisionClock.monotonic.now
        while newRan.withLock({ $0 }) == nil && PrecisionClock.monotonic.now - t0 < .seconds(10) { usleep(1_000) }
        let ranAt = try XCTUnwrap(newRan.withLock { $0 }, "the new task never ran")
        XCTAssertGreaterThanOrEqual(ranAt, movedAt + .milliseconds(400), "the new task ran at its first deadline")
        XCTAssertFalse(registry.contains("k"))
    }

    /// A one-shot due at once runs before `schedule` returns, while another
    /// `schedule` under the same key completes. The newest task must stay live
    /// (and run), and no dead entry may be left under the key.
    func testAOneShotThatRunsWhileARacingScheduleReplacesItCannotCancelTheNewestTask() throws {
        let clock = VirtualClock()
        let log = Recorder<String>()
        let armed = Atomic<Bool>(true)
        let registryBox = Locked<TaskRegistry?>(nil)
        // Deterministic interleaving: right after the first `schedule` started its
        // node, a racing `schedule` under the same key runs to completion, then the
        // first task (due now) fires.
        let registry = TaskRegistry(scheduler: TimerScheduler(clock: clock), afterStart: { key in
            guard armed.exchange(false, ordering: .relaxed), let registry = registryBox.withLock({ $0 }) else {
                return
            }
            registry.schedule(key, after: .milliseconds(10)) { log.append("newest") }
            clock.advance(by: .zero)
        })
        registryBox.withLock { $0 = registry }
        defer { registryBox.withLock { $0 = nil } }

        registry.schedule("k", after: .zero) { log.append("first") }
        XCTAssertFalse(armed.load(ordering: .relaxed), "the hook ran")
        clock.advance(by: .milliseconds(20))
        XCTAssertEqual(log.all.filter { $0 == "newest" }, ["newest"], "the newest task under the key was cancelled")
        XCTAssertFalse(registry.contains("k"), "a dead entry is left under the key")
        XCTAssertEqual(registry.count, 0)
    }

    /// A `schedule` that replaces a started task is paused between recording
    /// its own task and cancelling the one it replaced; meanwhile a racing
    /// `schedule` under the key (or a `cancel` of it) completes, and the
    /// replaced task falls due. Once that call has returned, the task the
    /// paused `schedule` replaced must not run: the key's record moved on
    /// past it. Each case: first (due at once) ← second (paused) ← the call.
    func testATaskReplacedByAPausedScheduleCannotRunAfterALaterCallReturns() throws {
        for racer in ["schedule", "cancel", "cancelAll"] {
            let clock = VirtualClock()
            let log = Recorder<String>()
            let armed = Atomic<Bool>(false)
            let registryBox = Locked<TaskRegistry?>(nil)
            let scheduler = TimerScheduler(clock: clock)
            let registry = TaskRegistry(scheduler: scheduler, afterRecord: { key in
                guard armed.exchange(false, ordering: .relaxed), let registry = registryBox.withLock({ $0 }) else {
                    return
                }
                switch racer {
                case "schedule": registry.schedule(key, after: .milliseconds(5)) { log.append("third") }
                case "cancel": XCTAssertTrue(registry.cancel(key))
                default: registry.cancelAll()
                }
                clock.advance(by: .zero)  // the first task is due: it runs now unless cancelled
            })
            registryBox.withLock { $0 = registry }
            defer { registryBox.withLock { $0 = nil } }

            registry.schedule("k", after: .zero) { log.append("first") }
            armed.store(true, ordering: .relaxed)
            registry.schedule("k", after: .seconds(10)) { log.append("second") }
            XCTAssertFalse(armed.load(ordering: .relaxed), "the hook ran")
            clock.advance(by: .seconds(20))
            XCTAssertEqual(log.all, racer == "schedule" ? ["third"] : [],
                           "after a racing \(racer) returned, a task it outdated ran")
            XCTAssertEqual(registry.count, 0)
            XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        }
    }

    /// The same on real threads: many schedules race under a few keys with one-shots due
    /// at once; afterwards every key holds at most the newest task, each recorded
    /// task is live (it runs), and nothing is left once they all have.
    func testRacingSchedulesOnRealThreadsLeaveOnlyLiveEntries() throws {
        let scheduler = try TimerScheduler(options: .init(name: "registry-race"))
        let registry = TaskRegistry(scheduler: scheduler)
        let ran = Atomic<Int>(0)
        let threads = 2
        let perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                let key = TaskRegistry.Key("k\(i % 4)")
                let delay: Duration = (i + t) % 3 == 0 ? .microseconds(200) : .zero
                _ = registry.schedule(key, after: delay) { ran.add(1, ordering: .relaxed) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while registry.count > 0 && ContinuousClock.now < deadline {
            usleep(1_000)
        }
        XCTAssertEqual(registry.count, 0, "entries left that will never run")
        // Every node was started exactly when it was recorded and cancelled only
        // if started: the engine's count of live timers comes back to zero.
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        XCTAssertGreaterThan(ran.load(ordering: .relaxed), 0)
    }
}
