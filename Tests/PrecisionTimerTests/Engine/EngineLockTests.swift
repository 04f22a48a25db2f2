@testable import PrecisionTimer
import XCTest

/// Which lock a scheduler's engine takes (see `Locked`).
final class EngineLockTests: XCTestCase {
    /// A scheduler that asks for realtime priority locks with priority
    /// inheritance: its thread never waits behind a preempted normal thread.
    /// Every other scheduler takes the adaptive mutex, which an unlock does not
    /// hand to a sleeping waiter through the kernel. Other locks inherit.
    func testARealtimeSchedulerInheritsPriorityAndOthersDoNot() throws {
        let normal = try TimerScheduler(options: .init(name: "lock-normal"))
        XCTAssertEqual(normal.engine.state.kind, .adaptive)
        let realtime = try TimerScheduler(options: .init(priority: .realtime(50), name: "lock-rt"))
        XCTAssertEqual(realtime.engine.state.kind, .priorityInheriting)
        XCTAssertEqual(TimerScheduler(clock: VirtualClock()).engine.state.kind, .adaptive)
        XCTAssertEqual(TimerScheduler.shared.engine.state.kind, .adaptive)
        // A registry's lock, taken on every call too, follows its scheduler's.
        XCTAssertEqual(TaskRegistry(scheduler: normal).lockKind, .adaptive)
        XCTAssertEqual(TaskRegistry(scheduler: realtime).lockKind, .priorityInheriting)
        // Locks a realtime thread of the user's may take, rarely contended.
        XCTAssertEqual(SleepLead.shared.kind, .priorityInheriting)
        XCTAssertEqual(AdaptiveMargin.shared.kind, .priorityInheriting)
    }

    /// The lock under contention from more threads than cores: every
    /// re-arm takes effect and the timers' handlers, run meanwhile, each run
    /// exactly once per deadline they reach.
    func testEightThreadsReArmingOneSchedulersTimersAllFinishAndLoseNothing() throws {
        let scheduler = try TimerScheduler(options: .init(name: "lock-contended"))
        let fired = Recorder<Int>()
        let timers = (0..<64).map { i in scheduler.schedule(after: .seconds(3600)) { _ in fired.append(i) } }
        let done = DispatchGroup()
        for t in 0..<8 {
            done.enter()
            Thread {
                for k in 0..<20_000 { timers[(t * 7 + k) & 63].reschedule(after: .seconds(60 + Int64(k & 7))) }
                done.leave()
            }.start()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "the re-arming threads finished")
        XCTAssertEqual(scheduler.statistics.liveTimers, 64)
        // Each timer now fires once, at its last deadline: bring them all near.
        for (i, timer) in timers.enumerated() { timer.reschedule(after: .milliseconds(Int64(i % 4))) }
        XCTAssertTrue(waitUntil { fired.count == 64 }, "every re-armed timer fired")
        XCTAssertEqual(fired.all.sorted(), Array(0..<64))
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }
}
