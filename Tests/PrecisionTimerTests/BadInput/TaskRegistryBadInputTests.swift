@testable import PrecisionTimer
import XCTest

/// Bad input to ``TaskRegistry`` (`Timers/TaskRegistry.swift`). `CONTRIBUTING.md` names these tests
/// row by row against the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in
/// `BadInputSupport.swift`.
final class TaskRegistryBadInputTests: BadInputTestCase {
    func testRegistryDelaysAndIntervalsPastTheRangeMeanNever() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        registry.schedule("k", after: .milliseconds(1), repeating: .milliseconds(1)) { runs.append(1) }
        clock.advance(by: .milliseconds(2))
        XCTAssertEqual(runs.all, [1, 1])
        // (Cancelled, or the long advance below would run it a million times.)
        XCTAssertTrue(registry.cancel("k"))
        // Delays and intervals past the clock's range are "never", not errors.
        registry.schedule("never-1", after: .seconds(1e20)) { runs.append(3) }
        registry.schedule("never-2", after: .zero, repeating: .seconds(1e20)) { runs.append(4) }
        registry.schedule("never-3", after: .seconds(Int64.max), repeating: .milliseconds(1)) { runs.append(5) }
        clock.advance(by: .seconds(1_000))
        XCTAssertEqual(runs.all.filter { $0 > 2 }, [4], "only the repeating task due at once ran, once")
        XCTAssertEqual(registry.count, 3)
        registry.cancelAll()
    }

    func testRegistryNegativeDelayRunsAtTheNextAdvance() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        for delay in [Duration.seconds(-5)] + hugelyNegative {
            let runs = Recorder<String>()
            registry.schedule("once", after: delay) { runs.append("once") }
            registry.schedule("every", after: delay, repeating: .milliseconds(1)) { runs.append("every") }
            clock.advance(by: .zero)
            XCTAssertEqual(runs.all.sorted(), ["every", "once"], "\(delay)")
            XCTAssertFalse(registry.contains("once"), "a one-shot that ran leaves the registry")
            registry.cancelAll()
        }
    }

    func testRegistryRepeatingTaskRunsOnTheSchedulersClock() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Instant>()
        registry.schedule("r", after: .milliseconds(5), repeating: .milliseconds(10)) {
            runs.append(clock.now())
        }
        let start = clock.now()
        clock.advance(by: .milliseconds(25))
        XCTAssertEqual(runs.all, [start + .milliseconds(5), start + .milliseconds(15), start + .milliseconds(25)],
                       "virtual time, not the kernel's clock")
    }

    func testRegistryCancelOfAnUnknownKeyOrTwiceReturnsFalse() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        XCTAssertFalse(registry.cancel("unknown"))
        registry.schedule("k", after: .milliseconds(1)) { runs.append(1) }
        XCTAssertTrue(registry.cancel("k"))
        XCTAssertFalse(registry.cancel("k"))
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(runs.count, 0)
    }

    func testRegistryCancelAllTwiceIsANoOp() throws {
        let (scheduler, clock) = makeScheduler()
        let registry = TaskRegistry(scheduler: scheduler)
        let runs = Recorder<Int>()
        registry.cancelAll()
        registry.schedule(after: .milliseconds(1)) { runs.append(1) }
        registry.schedule(after: .milliseconds(1), repeating: .milliseconds(1)) { runs.append(2) }
        XCTAssertEqual(registry.count, 2)
        registry.cancelAll()
        registry.cancelAll()
        XCTAssertEqual(registry.count, 0)
        clock.advance(by: .milliseconds(5))
        XCTAssertEqual(runs.count, 0)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }
}
