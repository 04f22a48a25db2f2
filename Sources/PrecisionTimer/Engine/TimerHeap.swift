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

/// An indexed binary min-heap of timer nodes: insert and remove-any are
/// O(log n), the minimum is O(1). Each node remembers its slot, so cancelling a
/// timer never searches. Ties break by insertion sequence, so timers due at the
/// same instant fire in the order they were scheduled.
///
/// Entries carry their key and tie-break inline, so sifting compares without
/// touching the nodes (cache-friendly with 100,000 timers), and hold unmanaged
/// references: the owning ``TimerQueue`` keeps one retain per queued node, so
/// sifting does no reference counting. Guarded by the engine's lock.
struct TimerHeap<Order: TimerHeapOrder> {
    struct Entry {
        var key: Int64
        /// Orders equal keys: the insertion sequence in the deadline heap (so
        /// same-instant timers fire in scheduling order); the node's deadline in
        /// the latest-instant heap (so a bulk removal can tell due entries
        /// without touching the nodes).
        var tieBreak: Int64
        var node: Unmanaged<TimerNode>

        @inline(__always)
        static func < (a: Entry, b: Entry) -> Bool {
            a.key < b.key || (a.key == b.key && a.tieBreak < b.tieBreak)
        }
    }

    private(set) var items: [Entry] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The node with the smallest key.
    @inline(__always)
    var top: TimerNode? { items.first?.node.takeUnretainedValue() }

    /// The entry with the smallest key.
    @inline(__always)
    var topEntry: Entry? { items.first }

    /// The smallest key, without touching the node.
    @inline(__always)
    var topKey: Int64? { items.first?.key }

    @inline(__always)
    private static func setIndex(_ entry: Entry, _ index: Int) {
        entry.node._withUnsafeGuaranteedRef { Order.setIndex($0, Int32(truncatingIfNeeded: index)) }
    }

    /// Adds `node` under its current key.
    mutating func insert(_ node: Unmanaged<TimerNode>, tieBreak: Int64) {
        let key = node._withUnsafeGuaranteedRef { Order.key($0) }
        items.append(Entry(key: key, tieBreak: tieBreak, node: node))
        siftUp(items.count - 1)
    }

    /// Removes `node`, which must be in this heap.
    mutating func remove(_ node: TimerNode) {
        let i = Int(Order.index(node))
        precondition(i >= 0 && i < items.count && items[i].node.toOpaque() == Unmanaged.passUnretained(node).toOpaque(),
                     "timer not in heap")
        Order.setIndex(node, -1)
        let last = items.removeLast()
        if i < items.count {
            items[i] = last
            Self.setIndex(last, i)
            siftDown(i)
            siftUp(i)
        }
    }

    /// Removes every entry `isRemoved` picks and restores the heap in O(n):
    /// cheaper than one removal at a time when many timers leave at once.
    /// Returns the removed entries in heap-array order (unsorted). Their nodes'
    /// slots are left stale: the caller re-queues them or ends them.
    mutating func removeAll(where isRemoved: (Entry) -> Bool) -> [Entry] {
        var removed: [Entry] = []
        var kept: [Entry] = []
        kept.reserveCapacity(items.count)
        for entry in items {
            if isRemoved(entry) {
                removed.append(entry)
            } else {
                kept.append(entry)
            }
        }
        items = kept
        for i in items.indices { Self.setIndex(items[i], i) }
        var i = items.count / 2 - 1
        while i >= 0 {
            siftDown(i)
            i -= 1
        }
        return removed
    }

    private mutating func siftUp(_ start: Int) {
        items.withUnsafeMutableBufferPointer { heap in
            var i = start
            let moving = heap[i]
            while i > 0 {
                let parent = (i - 1) / 2
                guard moving < heap[parent] else { break }
                heap[i] = heap[parent]
                Self.setIndex(heap[i], i)
                i = parent
            }
            heap[i] = moving
            Self.setIndex(moving, i)
        }
    }

    private mutating func siftDown(_ start: Int) {
        items.withUnsafeMutableBufferPointer { heap in
            var i = start
            let moving = heap[i]
            let n = heap.count
            while true {
                let left = 2 * i + 1
                guard left < n else { break }
                var child = left
                if left + 1 < n && heap[left + 1] < heap[left] {
                    child = left + 1
                }
                guard heap[child] < moving else { break }
                heap[i] = heap[child]
                Self.setIndex(heap[i], i)
                i = child
            }
            heap[i] = moving
            Self.setIndex(moving, i)
        }
    }
}
