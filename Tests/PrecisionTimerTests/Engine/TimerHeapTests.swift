@testable import PrecisionTimer
import XCTest

/// ``TimerHeap`` on its own, not through a scheduler (after swift-nio's
/// HeapTests): the order it hands nodes back in, the slot each node keeps of its
/// entry, `removeAll(where:)`, and random operations checked against a sorted
/// array. The heap holds unmanaged references, so every test keeps its nodes
/// alive in an array of its own.
final class TimerHeapTests: XCTestCase {
    let scheduler = TimerScheduler(clock: VirtualClock())
    var engine: TimerEngine { scheduler.engine }

    func testAnEmptyHeapHasNoTop() {
        let heap = TimerHeap<ByDeadline>()
        XCTAssertTrue(heap.isEmpty)
        XCTAssertEqual(heap.count, 0)
        XCTAssertNil(heap.top)
        XCTAssertNil(heap.topEntry)
        XCTAssertNil(heap.topKey)
    }

    func testTopIsTheSmallestKeyAndNodesLeaveInKeyOrder() {
        var heap = TimerHeap<ByDeadline>()
        let deadlines: [Int64] = [50, 10, 40, .max, -7, 30, 20, .min, 0, 60]
        let nodes = deadlines.map { engine.testNode(deadline: $0) }
        for (sequence, node) in nodes.enumerated() {
            heap.insert(.passUnretained(node), tieBreak: Int64(sequence))
            XCTAssertEqual(heap.topKey, nodes[...sequence].map(\.deadline).min())
            assertHeapIsValid(heap)
        }
        XCTAssertEqual(heap.count, nodes.count)
        var popped: [Int64] = []
        while let top = heap.top {
            XCTAssertEqual(heap.topEntry?.key, top.deadline)
            heap.remove(top)
            XCTAssertEqual(top.deadlineSlot, -1, "a removed node forgets its slot")
            popped.append(top.deadline)
            assertHeapIsValid(heap)
        }
        XCTAssertEqual(popped, deadlines.sorted())
        XCTAssertTrue(heap.isEmpty)
    }

    func testEqualKeysLeaveInTieBreakOrder() {
        var heap = TimerHeap<ByDeadline>()
        let nodes = (0..<20).map { _ in engine.testNode(deadline: 100) }
        let tieBreaks: [Int64] = [7, 3, 19, 0, 12, 5, 18, 1, 9, 14, 2, 16, 8, 11, 4, 17, 6, 13, 10, 15]
        for (node, tieBreak) in zip(nodes, tieBreaks) {
            heap.insert(.passUnretained(node), tieBreak: tieBreak)
        }
        var order: [Int64] = []
        while let entry = heap.topEntry {
            order.append(entry.tieBreak)
            heap.remove(entry.node.takeUnretainedValue())
        }
        XCTAssertEqual(order, Array(0..<20), "same key: the smaller tie-break first (scheduling order)")
    }

    func testRemovingFromAnyPlaceKeepsTheOrderAndTheSlots() {
        let nodes = (0..<31).map { engine.testNode(deadline: Int64(($0 * 17) % 31)) }
        // The top, a leaf, the last entry, an inner entry, then everything else.
        for first in [0, 30, 15, 3] {
            var heap = TimerHeap<ByDeadline>()
            for (sequence, node) in nodes.enumerated() {
                heap.insert(.passUnretained(node), tieBreak: Int64(sequence))
            }
            let victim = heap.items[first].node.takeUnretainedValue()
            heap.remove(victim)
            XCTAssertEqual(victim.deadlineSlot, -1)
            XCTAssertEqual(heap.count, nodes.count - 1)
            assertHeapIsValid(heap)
            var popped: [Int64] = []
            while let top = heap.top {
                heap.remove(top)
                popped.append(top.deadline)
            }
            XCTAssertEqual(popped, nodes.map(\.deadline).filter { $0 != victim.deadline }.sorted(), "entry \(first)")
        }
    }

    func testTheLatestHeapOrdersByDeadlinePlusLeewayAndSaturates() {
        var heap = TimerHeap<ByLatest>()
        let nodes = [
            engine.testNode(deadline: 10, leeway: 100),  // latest 110
            engine.testNode(deadline: 20),  // 20
            engine.testNode(deadline: 30, leeway: 5),  // 35
            engine.testNode(deadline: .max - 1, leeway: .max),  // saturates at .max
            engine.testNode(deadline: 0, leeway: 40),  // 40
        ]
        for node in nodes {
            heap.insert(.passUnretained(node), tieBreak: node.deadline)
        }
        assertHeapIsValid(heap)
        XCTAssertTrue(heap.top === nodes[1])
        var latest: [Int64] = []
        while let top = heap.top {
            latest.append(heap.topKey!)
            heap.remove(top)
            XCTAssertEqual(top.latestSlot, -1)
            XCTAssertEqual(top.deadlineSlot, -1, "the other heap's slot is not touched")
        }
        XCTAssertEqual(latest, [20, 35, 40, 110, .max])
    }

    func testRemoveAllWhereTakesThePickedEntriesAndRestoresTheHeap() {
        var heap = TimerHeap<ByDeadline>()
        let nodes = (0..<100).map { engine.testNode(deadline: Int64(($0 * 37) % 100)) }
        for (sequence, node) in nodes.enumerated() {
            heap.insert(.passUnretained(node), tieBreak: Int64(sequence))
        }
        let removed = heap.removeAll { $0.key % 3 == 0 }
        XCTAssertEqual(removed.map(\.key).sorted(), nodes.map(\.deadline).filter { $0 % 3 == 0 }.sorted())
        XCTAssertTrue(removed.allSatisfy { $0.node.takeUnretainedValue().deadline == $0.key }, "entries keep their node")
        XCTAssertEqual(heap.count, nodes.count - removed.count)
        assertHeapIsValid(heap)
        var popped: [Int64] = []
        while let top = heap.top {
            heap.remove(top)
            popped.append(top.deadline)
        }
        XCTAssertEqual(popped, nodes.map(\.deadline).filter { $0 % 3 != 0 }.sorted())
    }

    func testRemoveAllOfNothingOrEverything() {
        var heap = TimerHeap<ByDeadline>()
        XCTAssertTrue(heap.removeAll { _ in true }.isEmpty, "an empty heap")
        let nodes = (0..<10).map { engine.testNode(deadline: Int64(10 - $0)) }
        for (sequence, node) in nodes.enumerated() {
            heap.insert(.passUnretained(node), tieBreak: Int64(sequence))
        }
        XCTAssertTrue(heap.removeAll { _ in false }.isEmpty)
        XCTAssertEqual(heap.count, 10)
        assertHeapIsValid(heap)
        XCTAssertEqual(heap.removeAll { _ in true }.count, 10)
        XCTAssertTrue(heap.isEmpty)
        XCTAssertNil(heap.top)
    }

    /// Thousands of random inserts, removals (top and elsewhere) and bulk
    /// removals, with ties, each checked against a sorted array of what the heap
    /// should hold, and the heap and slots checked after every step.
    func testRandomOperationsAgainstASortedArrayOracle() {
        for seed: UInt64 in [1, 2, 3, 0xDEAD_BEEF] {
            var rng = SplitMix64(seed: seed)
            var heap = TimerHeap<ByDeadline>()
            // (deadline, tie-break, node), kept sorted by (deadline, tie-break).
            var oracle: [(key: Int64, tieBreak: Int64, node: TimerNode)] = []
            var sequence: Int64 = 0
            for step in 0..<3_000 {
                let roll = Int.random(in: 0..<100, using: &rng)
                switch roll {
                case 0..<50:  // insert, with keys from a small range so ties are common
                    let node = engine.testNode(deadline: Int64.random(in: -20...20, using: &rng))
                    heap.insert(.passUnretained(node), tieBreak: sequence)
                    oracle.append((node.deadline, sequence, node))
                    oracle.sort { ($0.key, $0.tieBreak) < ($1.key, $1.tieBreak) }
                    sequence += 1
                case 50..<70:  // remove the top
                    guard let top = heap.top else { continue }
                    XCTAssertTrue(top === oracle.first?.node, "seed \(seed) step \(step)")
                    heap.remove(top)
                    oracle.removeFirst()
                case 70..<98:  // remove any
                    guard !oracle.isEmpty else { continue }
                    let i = Int.random(in: 0..<oracle.count, using: &rng)
                    heap.remove(oracle[i].node)
                    oracle.remove(at: i)
                default:  // bulk removal of every key at or below a bound
                    let bound = Int64.random(in: -25...25, using: &rng)
                    let removed = heap.removeAll { $0.key <= bound }
                    XCTAssertEqual(removed.count, oracle.filter { $0.key <= bound }.count)
                    oracle.removeAll { $0.key <= bound }
                }
                XCTAssertEqual(heap.count, oracle.count, "seed \(seed) step \(step)")
                XCTAssertTrue(heap.top === oracle.first?.node, "seed \(seed) step \(step)")
                assertHeapIsValid(heap, "seed \(seed) step \(step)")
            }
            var drained: [TimerNode] = []
            while let top = heap.top {
                heap.remove(top)
                drained.append(top)
            }
            XCTAssertTrue(drained.elementsEqual(oracle.map(\.node), by: { $0 === $1 }), "seed \(seed): the final drain")
        }
    }
}

extension TimerEngine {
    /// A one-shot node on the monotonic clock, for the heap and queue tests: it
    /// is never started, so the engine never sees it.
    func testNode(deadline: Int64, leeway: Int64 = 0) -> TimerNode {
        TimerNode(engine: self, source: .monotonic, deadline: deadline, period: .zero, leeway: leeway, policy: .skip,
                  delivery: .inline, handler: .plain { _ in })
    }
}

/// Checks what a ``TimerHeap`` must hold after every operation: each entry no
/// smaller than its parent, each entry's key its node's current key, and each
/// node's slot the index of its entry.
func assertHeapIsValid<Order: TimerHeapOrder>(_ heap: TimerHeap<Order>, _ message: String = "",
                                              file: StaticString = #filePath, line: UInt = #line) {
    for (i, entry) in heap.items.enumerated() {
        let node = entry.node.takeUnretainedValue()
        XCTAssertEqual(Int(Order.index(node)), i, "slot of entry \(i) \(message)", file: file, line: line)
        XCTAssertEqual(entry.key, Order.key(node), "key of entry \(i) \(message)", file: file, line: line)
        if i > 0 {
            XCTAssertFalse(entry < heap.items[(i - 1) / 2], "entry \(i) is smaller than its parent \(message)",
                           file: file, line: line)
        }
    }
}
