/// Which key a ``TimerHeap`` orders by, and where the node keeps its position.
protocol TimerHeapOrder {
    static func key(_ node: TimerNode) -> Int64
    static func index(_ node: TimerNode) -> Int32
    static func setIndex(_ node: TimerNode, _ index: Int32)
}

/// Orders by a timer's deadline: the engine fires every timer at the top whose
/// deadline has passed.
enum ByDeadline: TimerHeapOrder {
    @inline(__always) static func key(_ node: TimerNode) -> Int64 { node.deadline }
    @inline(__always) static func index(_ node: TimerNode) -> Int32 { node.deadlineSlot }
    @inline(__always) static func setIndex(_ node: TimerNode, _ index: Int32) { node.deadlineSlot = index }
}

/// Orders by a timer's latest acceptable instant (deadline + leeway): the engine
/// must be awake by the top's.
enum ByLatest: TimerHeapOrder {
    @inline(__always) static func key(_ node: TimerNode) -> Int64 { node.latest }
    @inline(__always) static func index(_ node: TimerNode) -> Int32 { node.latestSlot }
    @inline(__always) static func setIndex(_ node: TimerNode, _ index: Int32) { node.latestSlot = index }
}

/// An indexed binary min-heap of timer nodes: insert, remove-any and update are
/// O(log n), the minimum is O(1). Each node remembers its slot, so cancelling a
/// timer never searches. Ties break by insertion sequence, so timers due at the
/// same instant fire in the order they were scheduled.
///
/// The heap stores unmanaged references: the owning ``TimerQueue`` holds one
/// retain per queued node, so sifting moves plain pointers with no reference
/// counting. Guarded by the engine's lock.
struct TimerHeap<Order: TimerHeapOrder> {
    private(set) var items: [Unmanaged<TimerNode>] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The node with the smallest key.
    @inline(__always)
    var top: TimerNode? { items.first?.takeUnretainedValue() }

    @inline(__always)
    private static func less(_ a: TimerNode, _ b: TimerNode) -> Bool {
        let ka = Order.key(a)
        let kb = Order.key(b)
        return ka < kb || (ka == kb && a.sequence < b.sequence)
    }

    mutating func insert(_ node: Unmanaged<TimerNode>) {
        items.append(node)
        siftUp(items.count - 1)
    }

    /// Removes `node`, which must be in this heap.
    mutating func remove(_ node: TimerNode) {
        let i = Int(Order.index(node))
        precondition(i >= 0 && i < items.count && items[i].takeUnretainedValue() === node, "timer not in heap")
        Order.setIndex(node, -1)
        let last = items.removeLast()
        if i < items.count {
            items[i] = last
            Order.setIndex(last.takeUnretainedValue(), Int32(i))
            siftDown(i)
            siftUp(i)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        let moving = items[i]
        let node = moving.takeUnretainedValue()
        while i > 0 {
            let parent = (i - 1) / 2
            let p = items[parent].takeUnretainedValue()
            guard Self.less(node, p) else { break }
            items[i] = items[parent]
            Order.setIndex(p, Int32(i))
            i = parent
        }
        items[i] = moving
        Order.setIndex(node, Int32(i))
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let moving = items[i]
        let node = moving.takeUnretainedValue()
        let n = items.count
        while true {
            let left = 2 * i + 1
            guard left < n else { break }
            var child = left
            var c = items[left].takeUnretainedValue()
            if left + 1 < n {
                let r = items[left + 1].takeUnretainedValue()
                if Self.less(r, c) {
                    child = left + 1
                    c = r
                }
            }
            guard Self.less(c, node) else { break }
            items[i] = items[child]
            Order.setIndex(c, Int32(i))
            i = child
        }
        items[i] = moving
        Order.setIndex(node, Int32(i))
    }
}

/// The pending timers of one clock: the same nodes in two heaps, one by deadline
/// (what is due) and one by latest acceptable instant (when to wake).
struct TimerQueue {
    var byDeadline = TimerHeap<ByDeadline>()
    var byLatest = TimerHeap<ByLatest>()
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { byDeadline.isEmpty }
    var count: Int { byDeadline.count }

    /// Queues `node`, taking one retain on it.
    mutating func insert(_ node: TimerNode) {
        node.sequence = nextSequence
        nextSequence &+= 1
        let ref = Unmanaged.passRetained(node)
        byDeadline.insert(ref)
        byLatest.insert(ref)
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
