import Dispatch
@testable import PrecisionTimer
import XCTest

/// A fire the engine thread prepares ahead of a spin (collected a few
/// milliseconds before a zero-leeway deadline, so that only the handler call
/// is left at the deadline) has not happened until that deadline: a call on
/// the timer in between acts on the prepared tick, as it would have a moment
/// before the preparation. The last two tests are about a repeating timer's
/// tick collected during the spin itself and held for the spin's end: the
/// timer's next tick must neither overtake it nor lose it.
///
/// Each test acts on the timer once the engine has marked its tick prepared
/// and counts the round only if the call returned before the deadline. A
/// scheduler that spins the last 5 ms makes that window wide; a round the
/// machine stalls through is run again.
final class PreparedFireTests: XCTestCase {
    private let clock = PrecisionClock()

    /// Waits until `node`'s fire is prepared, then runs `act`. Returns whether
    /// `act` ran while the fire was prepared and returned before `deadline`.
    private func actWhilePrepared(_ node: TimerNode, before deadline: PrecisionClock.Instant,
                                  _ act: () throws -> Void) rethrows -> Bool {
        while !node.read({ $0.isPrepared }) {
            guard clock.now < deadline else { return false }
            usleep(100)
        }
        try act()
        return clock.now < deadline
    }

    /// Runs `round` until it counts `needed` times (at most 30 tries) and
    /// asserts that it counted at least once.
    private func rounds(_ needed: Int = 3, _ round: () throws -> Bool) rethrows {
        var counted = 0
        for _ in 0..<30 where counted < needed {
            if try round() { counted += 1 }
        }
        XCTAssertGreaterThan(counted, 0, "no call landed between the preparation and the deadline")
    }

    func testSetNextDeadlineOnAPreparedTickMovesThatTick() throws {
        let scheduler = try spinningScheduler(name: "prepared-setnext", spinsLast: .milliseconds(5))
        try rounds {
            let d = clock.now + .milliseconds(30)
            let ticks = Recorder<Tick>()
            let timer = try scheduler.repeating(every: .milliseconds(40), startingAt: d) { ticks.append($0) }
            defer { timer.cancel() }
            guard try actWhilePrepared(timer.node, before: d, { try timer.setNextDeadline(d + .milliseconds(7)) })
            else { return false }
            XCTAssertTrue(waitUntil { ticks.count >= 1 })
            timer.cancel()
            let first = try XCTUnwrap(ticks.all.first)
            XCTAssertEqual(first.index, 0)
            XCTAssertEqual(first.deadline, d + .milliseconds(7), "the prepared tick fired at its old deadline")
            XCTAssertEqual(first.missed, 0)
            XCTAssertGreaterThanOrEqual(first.firedAt, first.deadline)
            return true
        }
    }

    func testSetIntervalOnAPreparedTickStartsAfterThatTick() throws {
        let scheduler = try spinningScheduler(name: "prepared-interval", spinsLast: .milliseconds(5))
        try rounds {
            let d = clock.now + .milliseconds(30)
            let ticks = Recorder<Tick>()
            let timer = try scheduler.repeating(every: .milliseconds(40), startingAt: d) { ticks.append($0) }
            defer { timer.cancel() }
            guard actWhilePrepared(timer.node, before: d, { timer.setInterval(.milliseconds(10)) })
            else { return false }
            XCTAssertTrue(waitUntil { ticks.count >= 2 })
            timer.cancel()
            let all = ticks.all
            XCTAssertEqual(all[0].index, 0)
            XCTAssertEqual(all[0].deadline, d)
            XCTAssertEqual(all[1].deadline, d + .milliseconds(10), "the new interval began one tick late")
            XCTAssertTrue(all.allSatisfy { $0.firedAt >= $0.deadline })
            return true
        }
    }

    func testSuspendAndResumeAroundAPreparedTickKeepThatTick() throws {
        let scheduler = try spinningScheduler(name: "prepared-suspend", spinsLast: .milliseconds(5))
        let queue = DispatchQueue(label: "prepared-suspend")
        for delivery in [TimerDelivery.inline, .queue(queue)] {
            try rounds {
                let d = clock.now + .milliseconds(30)
                let ticks = Recorder<Tick>()
                let timer = try scheduler.repeating(every: .milliseconds(40), startingAt: d, delivery: delivery) {
                    ticks.append($0)
                }
                defer { timer.cancel() }
                guard actWhilePrepared(timer.node, before: d, { timer.suspend(); timer.resume() })
                else { return false }
                XCTAssertTrue(waitUntil { ticks.count >= 1 })
                timer.cancel()
                let first = try XCTUnwrap(ticks.all.first)
                XCTAssertEqual(first.index, 0, "the prepared tick was dropped (\(delivery))")
                XCTAssertEqual(first.deadline, d)
                XCTAssertEqual(first.missed, 0)
                XCTAssertGreaterThanOrEqual(first.firedAt, first.deadline)
                return true
            }
        }
    }

    func testASuspendThatLastsPastThePreparedDeadlineReportsItMissed() throws {
        let scheduler = try spinningScheduler(name: "prepared-suspend-long", spinsLast: .milliseconds(5))
        try rounds(1) {
            let d = clock.now + .milliseconds(30)
            let ticks = Recorder<Tick>()
            let timer = try scheduler.repeating(every: .milliseconds(20), startingAt: d) { ticks.append($0) }
            defer { timer.cancel() }
            guard actWhilePrepared(timer.node, before: d, { timer.suspend() }) else { return false }
            // Resumed between tick 1 (d + 20 ms) and tick 2: one fire for tick 1,
            // tick 0 missed; nothing ran while suspended.
            while clock.now < d + .milliseconds(25) { usleep(500) }
            XCTAssertEqual(ticks.count, 0, "a tick ran while the timer was suspended")
            timer.resume()
            XCTAssertTrue(waitUntil { ticks.count >= 1 })
            timer.cancel()
            let first = try XCTUnwrap(ticks.all.first)
            XCTAssertEqual(first.index, 1)
            XCTAssertEqual(first.missed, 1)
            return true
        }
    }

    func testNextDeadlineReadsThePreparedTickUntilItFires() throws {
        let scheduler = try spinningScheduler(name: "prepared-read", spinsLast: .milliseconds(5))
        try rounds {
            let d = clock.now + .milliseconds(30)
            let timer = try scheduler.repeating(every: .milliseconds(40), startingAt: d) { _ in }
            defer { timer.cancel() }
            var read: PrecisionClock.Instant?
            guard actWhilePrepared(timer.node, before: d, { read = timer.nextDeadline }) else { return false }
            XCTAssertEqual(read, d, "the next deadline read as the tick after the prepared one")
            return true
        }
    }

    func testFireOnAPreparedOneShotFiresItNow() throws {
        let scheduler = try spinningScheduler(name: "prepared-fire", spinsLast: .milliseconds(5))
        try rounds {
            let d = clock.now + .milliseconds(30)
            let ticks = Recorder<Tick>()
            let timer = scheduler.schedule(at: d) { ticks.append($0) }
            guard actWhilePrepared(timer.node, before: d, { timer.fire() }) else {
                timer.cancel()
                return false
            }
            XCTAssertTrue(waitUntil { timer.hasFired })
            usleep(40_000)  // past the deadline: the timer fired once, by hand
            let all = ticks.all
            XCTAssertEqual(all.count, 1)
            XCTAssertEqual(all.first?.isManual, true, "the fire by hand was lost to the prepared fire")
            // It runs at once, not at the deadline: a round in which the
            // machine held the scheduler's thread past the deadline does not
            // count (an engine that waited for the deadline counts none).
            return try XCTUnwrap(all.first).firedAt < d
        }
    }

    // MARK: - A tick collected during the spin

    /// A repeating timer's tick collected during a spin waits for the spin's
    /// end when a tick prepared before it is due earlier (`L`, with leeway).
    /// Its next tick must not be collected meanwhile: moved into the past, it
    /// would be called first; after a suspend and resume, the waiting tick
    /// would be dropped uncounted.
    private func tickHeldDuringASpin(every period: Duration, _ act: (RepeatingTimer, PrecisionClock.Instant) throws -> Void) throws {
        let scheduler = try spinningScheduler(name: "held-tick", spinsLast: .milliseconds(5))
        try rounds {
            let d = clock.now + .milliseconds(30)
            let x = d - .milliseconds(3)
            let leeway = scheduler.schedule(at: x, leeway: .milliseconds(4)) { _ in }
            let last = scheduler.schedule(at: d) { _ in }
            defer { leeway.cancel(); last.cancel() }
            guard actWhilePrepared(last.node, before: d, {}) else { return false }
            while clock.now < x + .microseconds(200) { usleep(50) }
            let ticks = Recorder<Tick>()
            let timer = try scheduler.repeating(every: period, startingAt: x + .microseconds(100)) {
                ticks.append($0)
            }
            defer { timer.cancel() }
            while timer.node.read({ $0.grid.lastFiredIndex < 0 }) && clock.now < d { usleep(20) }
            try act(timer, x)
            guard clock.now < d else { return false }
            XCTAssertTrue(waitUntil { ticks.count >= 3 })
            timer.cancel()
            let all = ticks.all
            for (a, b) in zip(all, all.dropFirst()) {
                XCTAssertLessThan(a.index, b.index, "tick \(b.index) was called after tick \(a.index)")
            }
            let counted = all.reduce(0) { $0 + $1.missed + 1 }
            XCTAssertEqual(counted, try XCTUnwrap(all.last).index + 1, "a tick neither called nor counted missed")
            XCTAssertTrue(all.allSatisfy { $0.firedAt >= $0.deadline })
            return true
        }
    }

    func testANextTickMovedIntoThePastDoesNotOvertakeATickHeldDuringASpin() throws {
        // Tick 1 moved before tick 0's deadline, with tick 2 not yet due.
        try tickHeldDuringASpin(every: .milliseconds(10)) { timer, x in try timer.setNextDeadline(x - .milliseconds(1)) }
    }

    func testASuspendAndResumeDuringASpinCountsTheHeldTickAsMissed() throws {
        // Ticks due every 100 µs: the next is due by the resume.
        try tickHeldDuringASpin(every: .microseconds(100)) { timer, _ in
            timer.suspend()
            timer.resume()
        }
    }
}
