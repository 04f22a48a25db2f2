/// The pending timers of one clock: the same nodes in two heaps, one by deadline
/// (what is due) and one by latest acceptable instant (when to wake).
struct TimerQueue {
    var byDeadline = TimerHeap<ByDeadline>()
    var byLatest = TimerHeap<ByLatest>()
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { byDeadline.isEmpty }
    var count: Int { byDeadline.count }

    /// Queues `node` under its current deadline and latest instant, taking one
    /// retain on it.
    mutating func insert(_ node: TimerNode) {
        let sequence = nextSequence
        nextSequence &+= 1
        let ref = Unmanaged.passRetained(node)
        byDeadline.insert(ref, tieBreak: Int64(bitPattern: sequence))
        byLatest.insert(ref, tieBreak: node.deadline)
    }

    /// Moves every node due at `now` into `due`, in (deadline, scheduling) order,
    /// handing over the queue's retain with each (the caller takes it with
    /// `takeRetainedValue`). One removal at a time while few are due; past a
    /// batch size, one O(n) rebuild of both heaps.
    mutating func removeDue(at now: Int64, into due: inout [Unmanaged<TimerNode>]) {
        var popped = 0
        while let key = byDeadline.topKey, key <= now {
            if popped == Self.bulkThreshold && byDeadline.count > Self.bulkThreshold {
                removeDueInBulk(at: now, into: &due)
                return
            }
            let top = byDeadline.topEntry!.node
            top._withUnsafeGuaranteedRef { node in
                byDeadline.remove(node)
                byLatest.remove(node)
            }
            due.append(top)
            popped += 1
        }
    }

    /// Past this many due timers in one collection, `removeDue` rebuilds instead.
    static let bulkThreshold = 256

    private mutating func removeDueInBulk(at now: Int64, into due: inout [Unmanaged<TimerNode>]) {
        var leaving = byDeadline.removeAll { $0.key <= now }
        leaving.sort { $0 < $1 }
        _ = byLatest.removeAll { $0.tieBreak <= now }  // tie-break = the node's deadline
        due.reserveCapacity(due.count + leaving.count)
        for entry in leaving {
            due.append(entry.node)
        }
    }

    /// Unqueues `node` and gives back the queue's retain. The caller holds its own
    /// reference, so the node is never freed (and its handler never released)
    /// while the engine's lock is held.
    mutating func remove(_ node: TimerNode) {
        byDeadline.remove(node)
        byLatest.remove(node)
        Unmanaged.passUnretained(node).release()
    }
}
