@testable import PrecisionTimer
import XCTest

/// ``TimerQueue`` with its wheel and run, against an oracle: whatever mix of
/// near and far deadlines, leeways, removals, moves later in place and
/// earlier moves, `removeDue` gives exactly the due timers that come first in
/// (deadline, scheduling) order, at most `limit` of them (all of them only
/// from the heaps' bulk path), and `settle` leaves the earliest timer where
/// ``TimerQueue/earliestHeld()`` sees it.
final class TimerWheelTests: XCTestCase {
    let scheduler = TimerScheduler(clock: VirtualClock())
    var engine: TimerEngine { scheduler.engine }

    /// What the oracle knows of a queued node.
    struct Queued {
        let node: TimerNode
        var key: (Int64, UInt64) { (node.deadline, node.sequence) }
    }

    func testRandomOperationsAgainstASortedOracle() {
        for seed in UInt64(1)...40 {
            var rng = SplitMix64(seed: seed)
            var queue = TimerQueue()
            var queued: [ObjectIdentifier: TimerNode] = [:]
            var now: Int64 = Int64.random(in: 0...5_000_000_000, using: &rng)
            let ms: Int64 = 1_000_000

            func deadline() -> Int64 {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: return now + Int64.random(in: -ms...ms, using: &rng)  // near, maybe past
                case 1: return now + Int64.random(in: 0...20, using: &rng) * 5 * ms  // few instants: many ties
                case 2: return now + Int64.random(in: 0...(600_000 * ms), using: &rng)  // up to ten minutes
                case 3: return now + Int64.random(in: 0...(3 * ms), using: &rng)
                case 4: return .max  // never
                default: return now + 60_000 * ms + Int64.random(in: 0...1_000, using: &rng)
                }
            }

            for step in 0..<400 {
                let label = "seed \(seed), step \(step)"
                switch Int.random(in: 0..<10, using: &rng) {
                case 0...3:
                    let node = engine.testNode(deadline: deadline(),
                                               leeway: Bool.random(using: &rng) ? 0 : Int64.random(in: 0...(2 * ms), using: &rng))
                    queue.insert(node)
                    queued[ObjectIdentifier(node)] = node
                case 4:
                    guard let node = queued.values.randomElement(using: &rng) else { continue }
                    queue.remove(node)
                    queued[ObjectIdentifier(node)] = nil
                case 5, 6:
                    // Pushed back (in place when it waits in the wheel) or pulled in.
                    guard let node = queued.values.randomElement(using: &rng) else { continue }
                    let later = Bool.random(using: &rng)
                    let target = later ? node.deadline.saturatingAdd(Int64.random(in: 0...(120_000 * ms), using: &rng))
                                       : deadline()
                    if later && queue.waitsInWheel(node) {
                        node.grid = Grid(firstDeadline: target, period: .zero)
                        queue.movedLaterInPlace(node)
                    } else {
                        queue.remove(node)
                        node.grid = Grid(firstDeadline: target, period: .zero)
                        queue.insert(node)
                    }
                default:
                    now = now.saturatingAdd(Int64.random(in: 0...(Bool.random(using: &rng) ? 3 * ms : 400 * ms),
                                                         using: &rng))
                    let limit = Bool.random(using: &rng) ? Int.max : Int.random(in: 1...8, using: &rng)
                    let expected = queued.values.filter { $0.deadline <= now }
                        .sorted { Queued(node: $0).key < Queued(node: $1).key }
                    var due: [Unmanaged<TimerNode>] = []
                    queue.removeDue(at: now, into: &due, limit: limit)
                    let taken = due.map { $0.takeRetainedValue() }
                    XCTAssertTrue(taken.count == Swift.min(limit, expected.count) || taken.count == expected.count,
                                  "\(taken.count) taken of \(expected.count) due, limit \(limit); \(label)")
                    XCTAssertTrue(taken.elementsEqual(expected.prefix(taken.count), by: { $0 === $1 }),
                                  "the due timers, first ones first; \(label)")
                    for node in taken { queued[ObjectIdentifier(node)] = nil }
                }
                XCTAssertEqual(queue.count, queued.count, label)
                assertSettledEarliest(&queue, Array(queued.values), label)
            }
            var due: [Unmanaged<TimerNode>] = []
            queue.removeDue(at: .max - 1, into: &due)
            let rest = due.map { $0.takeRetainedValue() }
            XCTAssertEqual(rest.count, queued.values.filter { $0.deadline != .max }.count)
            for node in queued.values where node.deadline == .max { queue.remove(node) }
            XCTAssertTrue(queue.isEmpty)
        }
    }

    /// A million-timer instant's shape, smaller: timers made in order for one
    /// far instant cascade down whole and come out of the run first-in first
    /// out, a chunk at a time; the wheel is empty once they are in the run.
    func testASameInstantBatchCascadesWholeAndLeavesInSchedulingOrder() {
        var queue = TimerQueue()
        let instant: Int64 = 5_000_000_000
        let nodes = (0..<5_000).map { _ in engine.testNode(deadline: instant) }
        for node in nodes { queue.insert(node) }
        XCTAssertEqual(queue.wheel.count, nodes.count, "far timers wait in the wheel")
        XCTAssertTrue(queue.byDeadline.isEmpty)
        queue.settle()
        XCTAssertEqual(queue.run.count, nodes.count, "settled into the run, none into the heaps")
        XCTAssertTrue(queue.run.clean)
        var out: [TimerNode] = []
        var due: [Unmanaged<TimerNode>] = []
        queue.removeDue(at: instant - 1, into: &due, limit: 100)
        XCTAssertTrue(due.isEmpty, "never early")
        while !queue.isEmpty {
            queue.removeDue(at: instant, into: &due, limit: 1_000)
            XCTAssertLessThanOrEqual(due.count, 1_000)
            out += due.map { $0.takeRetainedValue() }
            due.removeAll()
        }
        XCTAssertTrue(out.elementsEqual(nodes, by: { $0 === $1 }))
    }

    /// A timer moved later in place stays in its slot; when that slot comes up
    /// it is filed again and fires at its new deadline, after a timer
    /// scheduled for that instant before the move, ahead of one scheduled
    /// after it.
    func testAMoveLaterInPlaceKeepsTheOrderOfTheMove() {
        var queue = TimerQueue()
        let second: Int64 = 1_000_000_000
        let before = engine.testNode(deadline: 9 * second)
        let moved = engine.testNode(deadline: 2 * second)
        queue.insert(before)
        queue.insert(moved)
        XCTAssertTrue(queue.waitsInWheel(moved))
        moved.grid = Grid(firstDeadline: 9 * second, period: .zero)
        queue.movedLaterInPlace(moved)
        let after = engine.testNode(deadline: 9 * second)
        queue.insert(after)
        var due: [Unmanaged<TimerNode>] = []
        queue.removeDue(at: 2 * second, into: &due)
        XCTAssertTrue(due.isEmpty, "not at its old deadline")
        queue.removeDue(at: 9 * second, into: &due)
        XCTAssertTrue(due.map { $0.takeRetainedValue() }.elementsEqual([before, moved, after], by: { $0 === $1 }))
        XCTAssertTrue(queue.isEmpty)
    }

    /// After `settle`, the earliest latest-acceptable instant the heaps and
    /// the run show is the earliest of every queued timer ("never" aside).
    func assertSettledEarliest(_ queue: inout TimerQueue, _ nodes: [TimerNode], _ label: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        queue.settle()
        let latest = nodes.map(\.latest).filter { $0 != .max }.min()
        XCTAssertEqual(queue.earliestHeld()?.latest, latest, label, file: file, line: line)
    }
}
