// The engine's invariants, asserted in debug builds after every operation that
// changes the state (ground rule 5 in TimerEngine.swift). Release builds
// compile the calls away.

#if DEBUG
/// A node of an engine, held weakly for the debug census of live timers.
struct WeakNode {
    weak var node: TimerNode?
}
#endif

extension TimerEngine {
    /// An engine that has started at most this many timers is checked whole
    /// after each operation; a larger one (stress tests with 100,000 timers)
    /// only at the node the operation touched, so a debug test suite stays
    /// fast.
    static let fullCheckLimit = 64

    /// Asserts what must hold whenever the lock is released:
    /// - the node the operation touched (if any) is on its clock's queue exactly
    ///   when it is scheduled and not in flight, is in both heaps or neither,
    ///   counts extra handler calls only while one runs, has no negative
    ///   leeway, is marked prepared only while its prepared fire waits (a
    ///   one-shot collected, a repeating timer in flight), and, in the run, is due before the wheel's frontier with no
    ///   leeway (but one a bulk removal left there due);
    /// - every 16th time, while the engine is small: both heaps of every queue hold the same
    ///   nodes, in heap order, each at the slot it records, every node there
    ///   being scheduled and not in flight; and `live` is the number of this
    ///   engine's started nodes that are scheduled, suspended or collected.
    @inline(__always)
    func assertInvariantsLocked(_ s: inout EngineState, _ node: TimerNode? = nil) {
        #if DEBUG
        checkInvariantsLocked(&s, node)
        #endif
    }

    #if DEBUG
    /// Whether `node` is in `heap` at the slot it records.
    private static func isIn<Order>(_ heap: TimerHeap<Order>, _ node: TimerNode, slot: Int32) -> Bool {
        let i = Int(slot)
        return i >= 0 && i < heap.count && heap.items[i].node.toOpaque() == Unmanaged.passUnretained(node).toOpaque()
    }

    private func checkNode(_ s: EngineState, _ node: TimerNode) {
        let queue = s.queues[node.source.rawValue]
        let byDeadline = Self.isIn(queue.byDeadline, node, slot: node.deadlineSlot)
        let byLatest = Self.isIn(queue.byLatest, node, slot: node.latestSlot)
        assert(byDeadline == byLatest, "PrecisionTimer invariant: a timer is in one of its queue's heaps only")
        assert(!(byDeadline && node.listed), "PrecisionTimer invariant: a timer both in the heaps and on a list")
        let queued = byDeadline || node.listed
        assert(queued == (node.state == .scheduled && !node.inFlight),
               "PrecisionTimer invariant: a timer is on its queue exactly when scheduled and not in flight "
               + "(state \(node.state), in flight \(node.inFlight), queued \(queued))")
        assert(!node.suspendedBeforeFire || node.state == .collected,
               "PrecisionTimer invariant: a one-shot marked suspended before its fire is \(node.state)")
        assert(node.isRunning || s.extraCalls[ObjectIdentifier(node)] == nil,
               "PrecisionTimer invariant: extra handler calls counted for a timer with none running")
        assert(node.leeway >= 0, "PrecisionTimer invariant: a negative leeway (\(node.leeway) ns)")
        assert(!node.isPrepared || (node.isRepeating ? node.state == .scheduled && node.inFlight
                                                     : node.state == .collected),
               "PrecisionTimer invariant: a prepared fire of a timer that is not waiting for it "
               + "(state \(node.state), in flight \(node.inFlight))")
        if node.listed && !queue.wheel.holds(node) {
            // In the run: due before the frontier, with no leeway unless a bulk
            // removal left it there due.
            assert(node.filedAt < queue.wheel.frontier && (node.leeway == 0 || node.deadline <= queue.dueThrough),
                   "PrecisionTimer invariant: a timer in the run with leeway or past the frontier "
                   + "(leeway \(node.leeway), filed \(node.filedAt), deadline \(node.deadline), "
                   + "frontier \(queue.wheel.frontier))")
        }
    }

    private func checkHeap<Order>(_ heap: TimerHeap<Order>, _ s: EngineState) {
        for (i, entry) in heap.items.enumerated() {
            let node = entry.node.takeUnretainedValue()
            assert(Int(Order.index(node)) == i, "PrecisionTimer invariant: a heap slot out of step")
            assert(Order.key(node) == entry.key, "PrecisionTimer invariant: a heap key out of step with its timer")
            if i > 0 {
                assert(!(entry < heap.items[(i - 1) / 2]), "PrecisionTimer invariant: heap order broken")
            }
            checkNode(s, node)
        }
    }

    /// The wheel's slots and the run: links both ways, counts, every node
    /// listed and scheduled; a slot's nodes filed within it (a node moved in
    /// place only later); the run in firing order, all before the wheel's
    /// frontier, with no leeway but on nodes due when a bulk removal left
    /// them there.
    private func checkLists(_ queue: TimerQueue, _ s: EngineState) {
        func walk(_ list: NodeList, _ body: (TimerNode) -> Void) -> Int {
            var count = 0
            var previous: Unmanaged<TimerNode>?
            var cursor = list.head
            while let ref = cursor {
                let node = ref.takeUnretainedValue()
                assert(node.prev?.toOpaque() == previous?.toOpaque(), "PrecisionTimer invariant: a list's links differ")
                assert(node.listed, "PrecisionTimer invariant: a node on a list is not marked listed (state \(node.state), filed \(node.filedAt), deadline \(node.deadline), frontier \(queue.wheel.frontier))")
                checkNode(s, node)
                body(node)
                previous = ref
                cursor = node.next
                count += 1
            }
            assert(list.tail?.toOpaque() == previous?.toOpaque(), "PrecisionTimer invariant: a list's tail is wrong")
            assert(count == list.count, "PrecisionTimer invariant: a list's count is wrong")
            return count
        }
        var filed = 0
        queue.wheel.forEachList { start, list in
            filed += walk(list) { node in
                assert(node.filedAt >= queue.wheel.frontier && node.filedAt >= start && node.deadline >= node.filedAt,
                       "PrecisionTimer invariant: a timer filed outside its wheel slot")
            }
        }
        assert(filed == queue.wheel.count, "PrecisionTimer invariant: the wheel's count is wrong")
        var last: TimerNode?
        _ = walk(queue.run) { node in
            assert((node.leeway == 0 || node.deadline <= queue.dueThrough) && node.filedAt < queue.wheel.frontier,
                   "PrecisionTimer invariant: a timer in the run with leeway or past the frontier "
                   + "(leeway \(node.leeway), filed \(node.filedAt), deadline \(node.deadline), "
                   + "frontier \(queue.wheel.frontier), elapsed \(queue.wheel.elapsed), run \(queue.run.count))")
            if let last { assert(!NodeList.precedes(node, last), "PrecisionTimer invariant: the run out of order") }
            last = node
        }
    }

    private func checkInvariantsLocked(_ s: inout EngineState, _ node: TimerNode?) {
        assert(s.live >= 0, "PrecisionTimer invariant: a negative live count")
        if let node { checkNode(s, node) }
        // The whole state every 16th operation: a broken invariant stays
        // broken, so a sampled check still names it, and a million virtual
        // ticks stay affordable in a debug build.
        s.invariantChecks &+= 1
        guard !s.censusOverflowed, s.invariantChecks & 15 == 0 else { return }
        for queue in s.queues {
            assert(queue.byDeadline.count == queue.byLatest.count, "PrecisionTimer invariant: heaps of one queue differ")
            checkHeap(queue.byDeadline, s)
            checkHeap(queue.byLatest, s)
            checkLists(queue, s)
        }
        var live = 0
        for entry in s.census {
            guard let n = entry.node else { continue }
            switch n.state {
            case .scheduled, .suspended, .collected: live += 1
            case .idle, .done, .cancelled: break
            }
        }
        assert(live == s.live, "PrecisionTimer invariant: live count \(s.live), but \(live) timers are live")
    }
    #endif
}
