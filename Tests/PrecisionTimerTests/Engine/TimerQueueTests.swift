@testable import PrecisionTimer
import XCTest

/// ``TimerQueue``'s heaps on their own (a queue whose wheel takes nothing;
/// the wheel and the run are in TimerWheelTests), not through a scheduler:
/// the same nodes in two heaps (by deadline, by latest acceptable instant), `removeDue` in (deadline,
/// scheduling) order on both of its paths (one removal at a time, and the bulk
/// rebuild past ``TimerQueue/bulkThreshold``), `remove`, and the one retain the
/// queue keeps per queued node: given back by `remove`, handed over by
/// `removeDue`, so a node is freed once it has left the queue and its last
/// holder lets go.
final class TimerQueueTests: XCTestCase {
    let scheduler = TimerScheduler(clock: VirtualClock())
    var engine: TimerEngine { scheduler.engine }

    func testInsertPutsTheNodeInBothHeaps() {
        var queue = TimerQueue(wheelFrom: .max)
        XCTAssertTrue(queue.isEmpty)
        let relaxed = engine.testNode(deadline: 10, leeway: 100)  // due first, latest 110
        let strict = engine.testNode(deadline: 20)  // due second, latest 20
        queue.insert(relaxed)
        queue.insert(strict)
        XCTAssertEqual(queue.count, 2)
        XCTAssertEqual(queue.byLatest.count, 2)
        XCTAssertTrue(queue.byDeadline.top === relaxed, "what is due first")
        XCTAssertTrue(queue.byLatest.top === strict, "when the engine must be awake")
        assertQueueIsValid(queue)
        XCTAssertEqual(drain(&queue).count, 2)
    }

    func testRemoveDueTakesTheDueNodesInDeadlineThenSchedulingOrder() {
        var queue = TimerQueue(wheelFrom: .max)
        let nodes = [30, 10, 20, 10, 40, 20].map { engine.testNode(deadline: $0) }
        for node in nodes { queue.insert(node) }
        var due: [Unmanaged<TimerNode>] = []
        queue.removeDue(at: 5, into: &due)
        XCTAssertTrue(due.isEmpty, "nothing due before the first deadline")
        XCTAssertEqual(queue.count, 6)
        queue.removeDue(at: 30, into: &due)
        let taken = due.map { $0.takeRetainedValue() }
        XCTAssertTrue(taken.elementsEqual([nodes[1], nodes[3], nodes[2], nodes[5], nodes[0]], by: { $0 === $1 }),
                      "by deadline; same deadline, in the order scheduled")
        XCTAssertEqual(queue.count, 1)
        XCTAssertTrue(queue.byDeadline.top === nodes[4])
        XCTAssertTrue(queue.byLatest.top === nodes[4], "a due node leaves both heaps")
        assertQueueIsValid(queue)
        XCTAssertTrue(drain(&queue).elementsEqual([nodes[4]], by: { $0 === $1 }))
    }

    func testRemoveDueAppendsAfterWhatIsAlreadyCollected() {
        var queue = TimerQueue(wheelFrom: .max)
        let earlier = engine.testNode(deadline: 1)
        let nodes = [3, 2].map { engine.testNode(deadline: $0) }
        for node in nodes { queue.insert(node) }
        var due: [Unmanaged<TimerNode>] = [.passRetained(earlier)]
        queue.removeDue(at: 3, into: &due)
        let taken = due.map { $0.takeRetainedValue() }
        XCTAssertTrue(taken.elementsEqual([earlier, nodes[1], nodes[0]], by: { $0 === $1 }))
        XCTAssertTrue(queue.isEmpty)
    }

    /// Around ``TimerQueue/bulkThreshold`` due nodes, with and without enough
    /// others left queued for the bulk path to be taken: both paths give the
    /// same order and leave both heaps valid.
    func testBothRemoveDuePathsGiveTheSameOrderAndLeaveValidHeaps() {
        let threshold = TimerQueue.bulkThreshold
        for dueCount in [threshold - 1, threshold, threshold + 1, 3 * threshold] {
            for notDueCount in [0, 1, threshold + 1] {
                var rng = SplitMix64(seed: UInt64(dueCount * 1_000 + notDueCount))
                var queue = TimerQueue(wheelFrom: .max)
                let now: Int64 = 1_000
                // Few distinct deadlines, so many ties; leeways so the two heaps disagree.
                var nodes: [TimerNode] = []
                for _ in 0..<dueCount {
                    nodes.append(engine.testNode(deadline: Int64.random(in: 0...20, using: &rng) * 50,
                                                 leeway: Int64.random(in: 0...2_000, using: &rng)))
                }
                for _ in 0..<notDueCount {
                    nodes.append(engine.testNode(deadline: now + Int64.random(in: 1...500, using: &rng),
                                                 leeway: Int64.random(in: 0...2_000, using: &rng)))
                }
                nodes.shuffle(using: &rng)
                for node in nodes { queue.insert(node) }
                let label = "\(dueCount) due, \(notDueCount) not"

                var due: [Unmanaged<TimerNode>] = []
                queue.removeDue(at: now, into: &due)
                let taken = due.map { $0.takeRetainedValue() }
                // Expected: the due nodes, by deadline, then by the order they were queued in.
                let expected = nodes.enumerated().filter { $0.element.deadline <= now }
                    .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                    .map(\.element)
                XCTAssertTrue(taken.elementsEqual(expected, by: { $0 === $1 }), label)
                // Which path ran: past the threshold, with more than that many
                // still queued, the bulk path, which leaves the slots of the nodes
                // it removes stale (one removal at a time clears them).
                let bulk = dueCount > threshold && dueCount + notDueCount - threshold > threshold
                XCTAssertEqual(taken.contains { $0.deadlineSlot != -1 }, bulk, "bulk path: \(bulk), \(label)")
                XCTAssertEqual(queue.count, notDueCount, label)
                XCTAssertEqual(queue.byLatest.count, notDueCount, label)
                XCTAssertTrue(queue.byDeadline.items.allSatisfy { $0.key > now }, label)
                assertQueueIsValid(queue, label)
                // What stays keeps working: more nodes go in, and everything comes out in order.
                let later = engine.testNode(deadline: now + 1)
                queue.insert(later)
                assertQueueIsValid(queue, label)
                let rest = drain(&queue)
                XCTAssertEqual(rest.count, notDueCount + 1, label)
                XCTAssertEqual(rest.map(\.deadline), rest.map(\.deadline).sorted(), label)
            }
        }
    }

    /// A bulk removal past the collection's limit hands over only the limit;
    /// the rest wait at the head of the run, ahead of the run's own nodes
    /// (not due yet), and come out in (deadline, scheduling) order over the
    /// next collections, merged with what is scheduled meanwhile. A waiting
    /// node can be removed: it never comes out, and the queue lets go of it.
    func testABulkRemovalPastTheLimitLeavesTheRestInOrderAtTheHeadOfTheRun() throws {
        let threshold = TimerQueue.bulkThreshold
        let limit = 300
        var queue = TimerQueue(wheelFrom: 0)
        var due: [Unmanaged<TimerNode>] = []
        let now = 100 * TimerQueue.lookahead
        queue.removeDue(at: now - TimerQueue.lookahead, into: &due)  // the wheel's frontier moves to now
        XCTAssertTrue(due.isEmpty)
        XCTAssertEqual(queue.wheel.frontier, now)
        var rng = SplitMix64(seed: 26)
        // Due by now, before the frontier: few deadlines, many ties, all
        // with leeway (the heaps; a zero-leeway one might join the run).
        var nodes: [TimerNode?] = (0..<(4 * threshold)).map { _ in
            engine.testNode(deadline: now - 1 - Int64.random(in: 0...5, using: &rng) * 100,
                            leeway: 1 + Int64.random(in: 0...1, using: &rng) * 1_000)
        }
        // Not due yet, in the wheel: soon (the run, once the collection takes
        // their slots out, before the heaps' bulk) and later.
        nodes += (0..<50).map { i in engine.testNode(deadline: now + 1 + Int64(i) * 1_000) } as [TimerNode?]
        nodes += (0..<50).map { i in engine.testNode(deadline: now + 3 * TimerQueue.lookahead + Int64(i)) } as [TimerNode?]
        for node in nodes { queue.insert(node!) }
        let total = nodes.count
        var order = Array(0..<total)  // scheduling order, as indices into `nodes`

        var out: [TimerNode] = []
        queue.removeDue(at: now, into: &due, limit: limit)
        XCTAssertEqual(due.count, limit, "the limit, not the whole batch")
        out += due.map { $0.takeRetainedValue() }
        due.removeAll()
        XCTAssertEqual(queue.run.count, 4 * threshold - limit + 50, "the rest waits in the run, before the run's own")
        assertQueueIsValid(queue)

        // Meanwhile: one more due timer is scheduled, and one waiting in the run is removed.
        let late = engine.testNode(deadline: now - 300, leeway: 1)
        queue.insert(late)
        nodes.append(late)
        order.append(total)
        let waitingIndex = try XCTUnwrap(order.first { i in
            nodes[i]!.listed && !out.contains { $0 === nodes[i]! } && nodes[i]!.deadline <= now
        })
        queue.remove(nodes[waitingIndex]!)
        weak let removed = nodes[waitingIndex]
        nodes[waitingIndex] = nil
        order.removeAll { $0 == waitingIndex }
        XCTAssertNil(removed, "the queue let go of the removed node")

        while true {
            queue.removeDue(at: now, into: &due, limit: limit)
            if due.isEmpty { break }
            XCTAssertLessThanOrEqual(due.count, limit)
            out += due.map { $0.takeRetainedValue() }
            due.removeAll()
            assertQueueIsValid(queue)
        }
        let dueOrder = order.filter { nodes[$0]!.deadline <= now }
            .sorted { (nodes[$0]!.deadline, $0) < (nodes[$1]!.deadline, $1) }
        XCTAssertTrue(out.elementsEqual(dueOrder.map { nodes[$0]! }, by: { $0 === $1 }),
                      "every due node once, by deadline, then in the order scheduled")
        let rest = drain(&queue)
        let restOrder = order.filter { nodes[$0]!.deadline > now }
            .sorted { (nodes[$0]!.deadline, $0) < (nodes[$1]!.deadline, $1) }
        XCTAssertTrue(rest.elementsEqual(restOrder.map { nodes[$0]! }, by: { $0 === $1 }), "then the rest, in order")
    }

    /// A zero-leeway timer due before the wheel's frontier joins the run
    /// when it sorts after the run's last timer (a same-instant batch, in
    /// the order scheduled), and the heaps otherwise (an earlier one, one
    /// with leeway). Whichever way they went in, they come out by deadline,
    /// then in the order scheduled.
    func testAZeroLeewayTimerNotBeforeTheRunsLastJoinsTheRun() {
        var queue = TimerQueue(wheelFrom: 0)
        var due: [Unmanaged<TimerNode>] = []
        let now = 100 * TimerQueue.lookahead
        queue.removeDue(at: now - TimerQueue.lookahead, into: &due)  // the wheel's frontier moves to now
        XCTAssertEqual(queue.wheel.frontier, now)
        let batch = (0..<1_000).map { _ in engine.testNode(deadline: now - 10) }
        for node in batch { queue.insert(node) }
        XCTAssertEqual(queue.run.count, batch.count, "a same-instant batch, in the order scheduled: the run")
        XCTAssertTrue(queue.byDeadline.isEmpty)
        let earlier = engine.testNode(deadline: now - 20)
        let withLeeway = engine.testNode(deadline: now - 10, leeway: 5)
        let sameInstant = engine.testNode(deadline: now - 10)
        let later = engine.testNode(deadline: now - 5)
        for node in [earlier, withLeeway, sameInstant, later] { queue.insert(node) }
        XCTAssertEqual(queue.byDeadline.count, 2, "the earlier one and the one with leeway: the heaps")
        XCTAssertEqual(queue.run.count, batch.count + 2)
        XCTAssertTrue(sameInstant.listed && later.listed && !earlier.listed && !withLeeway.listed)
        assertQueueIsValid(queue)

        queue.remove(batch[500])  // from the middle of the run
        queue.removeDue(at: now - 11, into: &due)
        XCTAssertEqual(due.map { $0.takeRetainedValue() }.map(ObjectIdentifier.init), [ObjectIdentifier(earlier)])
        due.removeAll()
        queue.removeDue(at: now, into: &due)
        let expected = batch[..<500] + batch[501...] + [withLeeway, sameInstant, later]
        XCTAssertTrue(due.map { $0.takeRetainedValue() }.elementsEqual(expected, by: { $0 === $1 }),
                      "by deadline, then in the order scheduled, across the run and the heaps")
        XCTAssertTrue(queue.isEmpty)
    }

    /// A zero-leeway timer past the wheel's range (and "never") goes to the
    /// heaps even when the run is empty: the run holds only what is due
    /// before the frontier, so the wheel's slots can join it in order.
    func testAZeroLeewayTimerPastTheWheelsRangeGoesToTheHeaps() {
        var queue = TimerQueue(wheelFrom: 0)
        var due: [Unmanaged<TimerNode>] = []
        let now = 100 * TimerQueue.lookahead
        queue.removeDue(at: now - TimerQueue.lookahead, into: &due)
        let beyond = engine.testNode(deadline: now + (Int64(1) << TimerWheel.rangeShift))
        let never = engine.testNode(deadline: .max)
        queue.insert(beyond)
        queue.insert(never)
        XCTAssertTrue(queue.run.isEmpty)
        XCTAssertEqual(queue.byDeadline.count, 2)
        XCTAssertFalse(beyond.listed || never.listed)
        // A near timer scheduled afterwards, in the wheel, still fires first.
        let near = engine.testNode(deadline: now + TimerQueue.lookahead)
        queue.insert(near)
        queue.removeDue(at: now + (Int64(1) << TimerWheel.rangeShift), into: &due)
        XCTAssertTrue(due.map { $0.takeRetainedValue() }.elementsEqual([near, beyond], by: { $0 === $1 }))
        XCTAssertEqual(queue.count, 1, "never is never due")
        queue.remove(never)
    }

    func testRemoveTakesTheNodeOutOfBothHeaps() {
        var queue = TimerQueue(wheelFrom: .max)
        let nodes = (0..<50).map { engine.testNode(deadline: Int64(($0 * 7) % 50), leeway: Int64($0 % 5)) }
        for node in nodes { queue.insert(node) }
        for (i, node) in nodes.enumerated() where i % 3 == 0 {
            queue.remove(node)
            XCTAssertEqual(node.deadlineSlot, -1)
            XCTAssertEqual(node.latestSlot, -1)
            assertQueueIsValid(queue)
        }
        XCTAssertEqual(queue.count, 33)
        XCTAssertEqual(queue.byLatest.count, 33)
        let rest = drain(&queue)
        XCTAssertTrue(rest.elementsEqual(nodes.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
                                            .sorted { $0.deadline < $1.deadline }, by: { $0 === $1 }))
    }

    /// The queue keeps exactly one retain per queued node: a node queued and
    /// then let go by the test stays alive; `remove` gives the retain back and
    /// `removeDue` hands it over, so afterwards the test's reference is the only
    /// one and the node is freed when it goes.
    func testTheQueueKeepsOneRetainPerNodeAndGivesItBack() {
        var queue = TimerQueue(wheelFrom: .max)
        var node = engine.testNode(deadline: 10)
        XCTAssertTrue(isKnownUniquelyReferenced(&node))
        queue.insert(node)
        XCTAssertFalse(isKnownUniquelyReferenced(&node), "the queue holds it")
        queue.remove(node)
        XCTAssertTrue(isKnownUniquelyReferenced(&node), "remove gave the retain back")
        queue.insert(node)
        var due: [Unmanaged<TimerNode>] = []
        queue.removeDue(at: 10, into: &due)
        XCTAssertFalse(isKnownUniquelyReferenced(&node), "removeDue hands the retain over with the node")
        var taken = due.removeFirst().takeRetainedValue()
        XCTAssertTrue(taken === node)
        XCTAssertFalse(isKnownUniquelyReferenced(&taken), "the test's two references")
        node = taken
        taken = engine.testNode(deadline: 0)
        XCTAssertTrue(isKnownUniquelyReferenced(&node), "nothing else holds it")

        weak var queuedOnly: TimerNode?
        do {
            let transient = engine.testNode(deadline: 5)
            queuedOnly = transient
            queue.insert(transient)
        }
        XCTAssertNotNil(queuedOnly, "the queue's retain keeps a node nobody else holds")
        queue.remove(queuedOnly!)
        XCTAssertNil(queuedOnly, "freed once it left the queue")
    }

    /// Many nodes through every way out (`remove`, `removeDue` one at a time and
    /// in bulk): afterwards none is alive, and in a debug build the count of live
    /// nodes is back where it was.
    func testEveryNodeIsFreedAfterLeavingTheQueueWhicheverWay() {
        #if DEBUG
        let before = TimerNode.instances.load(ordering: .relaxed)
        #endif
        var weakNodes: [WeakNode] = []
        do {
            var queue = TimerQueue(wheelFrom: .max)
            var rng = SplitMix64(seed: 42)
            var removable: [TimerNode] = []
            for i in 0..<(4 * TimerQueue.bulkThreshold) {
                let node = engine.testNode(deadline: Int64.random(in: 0...10_000, using: &rng), leeway: Int64(i % 7))
                weakNodes.append(WeakNode(node: node))
                queue.insert(node)
                if i % 5 == 0 { removable.append(node) }
            }
            for node in removable { queue.remove(node) }
            removable = []
            var due: [Unmanaged<TimerNode>] = []
            queue.removeDue(at: 100, into: &due)  // a few, one at a time
            queue.removeDue(at: 8_000, into: &due)  // many: the bulk path
            for ref in due { ref.release() }  // what the engine does with each, once run
            XCTAssertGreaterThan(queue.count, 0)
            XCTAssertTrue(weakNodes.contains { $0.node != nil }, "still queued, so still alive")
            _ = drain(&queue)
        }
        XCTAssertEqual(weakNodes.filter { $0.node != nil }.count, 0, "nodes still alive after leaving the queue")
        #if DEBUG
        XCTAssertLessThanOrEqual(TimerNode.instances.load(ordering: .relaxed), before, "TimerNode.instances")
        #endif
    }

    // MARK: - Support

    struct WeakNode {
        weak var node: TimerNode?
    }

    /// Takes every node out, by deadline, returning them with the queue's
    /// retains taken back.
    func drain(_ queue: inout TimerQueue) -> [TimerNode] {
        var due: [Unmanaged<TimerNode>] = []
        queue.removeDue(at: .max, into: &due)
        XCTAssertTrue(queue.isEmpty)
        XCTAssertTrue(queue.byLatest.isEmpty)
        return due.map { $0.takeRetainedValue() }
    }

    /// Both heaps valid, and holding the same nodes.
    func assertQueueIsValid(_ queue: TimerQueue, _ message: String = "",
                            file: StaticString = #filePath, line: UInt = #line) {
        assertHeapIsValid(queue.byDeadline, "by deadline \(message)", file: file, line: line)
        assertHeapIsValid(queue.byLatest, "by latest \(message)", file: file, line: line)
        let byDeadline = Set(queue.byDeadline.items.map { $0.node.toOpaque() })
        let byLatest = Set(queue.byLatest.items.map { $0.node.toOpaque() })
        XCTAssertEqual(byDeadline, byLatest, "the two heaps hold different nodes \(message)", file: file, line: line)
        for entry in queue.byLatest.items {
            XCTAssertEqual(entry.tieBreak, entry.node.takeUnretainedValue().deadline,
                           "the latest heap's tie-break is the node's deadline \(message)", file: file, line: line)
        }
    }
}
