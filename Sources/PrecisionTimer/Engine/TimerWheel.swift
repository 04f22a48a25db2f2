/// A FIFO list of timer nodes linked through the nodes themselves (their
/// `prev` / `next`): append, remove-any and pop-first are O(1), and a whole
/// list moves to another place in O(1). Holds no retains of its own: the
/// owning ``TimerQueue`` keeps one per queued node. Guarded by the engine's
/// lock.
///
/// Two flags let a list move whole instead of node by node: `clean` (every
/// node in (deadline, sequence) order and still filed under its deadline:
/// none moved later in place) and `hasLeeway` (some node has leeway).
struct NodeList {
    private(set) var head: Unmanaged<TimerNode>?
    private(set) var tail: Unmanaged<TimerNode>?
    private(set) var count = 0
    /// In (deadline, sequence) order, and no node moved in place since it was
    /// appended (removals keep a list clean).
    var clean = true
    var hasLeeway = false

    var isEmpty: Bool { head == nil }

    /// Whether `a` fires before `b`: by deadline, then by scheduling order.
    @inline(__always)
    static func precedes(_ a: TimerNode, _ b: TimerNode) -> Bool {
        let (da, db) = (a.deadline, b.deadline)
        return da < db || (da == db && a.sequence < b.sequence)
    }

    mutating func append(_ ref: Unmanaged<TimerNode>) {
        ref._withUnsafeGuaranteedRef { node in
            node.prev = tail
            node.next = nil
            if let tail {
                tail._withUnsafeGuaranteedRef { last in
                    last.next = ref
                    if clean && Self.precedes(node, last) { clean = false }
                }
            } else {
                head = ref
                clean = true
                hasLeeway = false
            }
            if node.leeway > 0 { hasLeeway = true }
        }
        tail = ref
        count += 1
    }

    /// Unlinks `node`, which must be on this list.
    mutating func remove(_ node: TimerNode) {
        let (before, after) = (node.prev, node.next)
        if let before {
            before._withUnsafeGuaranteedRef { $0.next = after }
        } else {
            head = after
        }
        if let after {
            after._withUnsafeGuaranteedRef { $0.prev = before }
        } else {
            tail = before
        }
        node.prev = nil
        node.next = nil
        count -= 1
        if count == 0 { self = NodeList() }
    }

    mutating func popFirst() -> Unmanaged<TimerNode>? {
        guard let first = head else { return nil }
        first._withUnsafeGuaranteedRef { remove($0) }
        return first
    }

    /// Appends every node of `other` (whose first node must not precede this
    /// list's last for the result to stay clean), in O(1).
    mutating func append(contentsOf other: NodeList) {
        guard let otherHead = other.head else { return }
        guard let tail else {
            self = other
            return
        }
        let ordered = otherHead._withUnsafeGuaranteedRef { first in
            tail._withUnsafeGuaranteedRef { last in !Self.precedes(first, last) }
        }
        tail._withUnsafeGuaranteedRef { $0.next = otherHead }
        otherHead._withUnsafeGuaranteedRef { $0.prev = tail }
        self.tail = other.tail
        count += other.count
        clean = clean && other.clean && ordered
        hasLeeway = hasLeeway || other.hasLeeway
    }
}

/// A hierarchical timing wheel (Varghese & Lauck; the layout of tokio's
/// `runtime/time/wheel`): six levels of 64 slots, a slot of level `k`
/// spanning 2^(20 + 6k) ns (level 0: about a millisecond; the six levels:
/// about 2.3 years). Filing, cancelling and moving a timer later are O(1),
/// whatever the number of timers: no comparison with other timers, no
/// logarithm of cache misses for a timeout that will never fire.
///
/// A timer is filed by the highest 6-bit group in which its deadline differs
/// from `elapsed` (so every timer of a level lies within the current slot of
/// the level above). The queue takes a slot out when its start comes near:
/// a level-0 slot's timers go to the queue's precise structures, a higher
/// slot's are filed again one or more levels down. A clean list (see
/// ``NodeList``) that falls into one lower slot moves whole, so a million
/// timers due at one instant cascade in O(1).
///
/// Where a node is filed is not stored: it follows from `elapsed` and the
/// deadline it was filed under (`filedAt`), which a move in place leaves
/// unchanged. Guarded by the engine's lock.
struct TimerWheel {
    static let levels = 6
    static let slotBits = 6
    static let slotsPerLevel = 1 << slotBits
    /// Level 0's slot spans 2^baseShift ns (1,048,576 ns).
    static let baseShift = 20
    static let slotWidth: Int64 = 1 << baseShift
    /// Deadlines differing from `elapsed` at or above this bit are out of range.
    static let rangeShift = baseShift + levels * slotBits

    /// The start of the last slot taken out: where filing is relative to.
    private(set) var elapsed: Int64
    /// Every deadline before this instant has left the wheel: the end of the
    /// last level-0 slot taken out (or `elapsed`, past a higher one).
    private(set) var frontier: Int64
    private var slots: [NodeList]
    /// Bit `i` of word `k`: slot `i` of level `k` holds nodes.
    private var occupied: [UInt64]
    private(set) var count = 0

    init(elapsed: Int64 = 0) {
        self.elapsed = Swift.max(0, elapsed)
        frontier = self.elapsed
        slots = [NodeList](repeating: NodeList(), count: Self.levels * Self.slotsPerLevel)
        occupied = [UInt64](repeating: 0, count: Self.levels)
    }

    /// Whether a timer due at `deadline` is filed here: not before the
    /// frontier, and within range ("never", `Int64.max`, is not).
    @inline(__always)
    func accepts(_ deadline: Int64) -> Bool {
        deadline >= frontier && deadline != .max && (deadline ^ elapsed) >> Self.rangeShift == 0
    }

    @inline(__always)
    private func level(of when: Int64) -> Int {
        let differing = (elapsed ^ when) >> Self.baseShift
        return differing == 0 ? 0 : (63 - differing.leadingZeroBitCount) / Self.slotBits
    }

    @inline(__always)
    private static func shift(_ level: Int) -> Int { baseShift + level * slotBits }

    /// The slot a node filed under `when` is in: its index in `slots`.
    @inline(__always)
    private func index(of when: Int64) -> Int {
        let level = level(of: when)
        return level * Self.slotsPerLevel + Int((when >> Self.shift(level)) & Int64(Self.slotsPerLevel - 1))
    }

    /// When the slot at `level`, `slot` (of `elapsed`'s current rotation) begins.
    @inline(__always)
    private func start(level: Int, slot: Int) -> Int64 {
        let shift = Self.shift(level)
        let rotation = (Int64(1) << (shift + Self.slotBits)) - 1
        return (elapsed & ~rotation) | (Int64(slot) << shift)
    }

    /// When the slot a timer due at `when` would be filed in begins.
    func slotStart(of when: Int64) -> Int64 {
        let level = level(of: when)
        return start(level: level, slot: Int((when >> Self.shift(level)) & Int64(Self.slotsPerLevel - 1)))
    }

    /// Files `ref` (the queue's retain taken) under its deadline, which the
    /// wheel must accept. Returns whether its slot was empty.
    @discardableResult
    mutating func insert(_ ref: Unmanaged<TimerNode>) -> Bool {
        let when = ref._withUnsafeGuaranteedRef { node in
            node.filedAt = node.deadline
            return node.deadline
        }
        let i = index(of: when)
        let wasEmpty = slots[i].isEmpty
        slots[i].append(ref)
        occupied[i >> Self.slotBits] |= 1 << UInt64(i & (Self.slotsPerLevel - 1))
        count += 1
        return wasEmpty
    }

    /// Whether `node` (listed in this queue) is filed here rather than in the run.
    @inline(__always)
    func holds(_ node: TimerNode) -> Bool { node.filedAt >= frontier }

    mutating func remove(_ node: TimerNode) {
        let i = index(of: node.filedAt)
        slots[i].remove(node)
        if slots[i].isEmpty { occupied[i >> Self.slotBits] &= ~(1 << UInt64(i & (Self.slotsPerLevel - 1))) }
        count -= 1
    }

    /// `node`, filed here, has moved to a later deadline in place: it stays
    /// where it is until its slot comes up, and is filed again then.
    mutating func markMoved(_ node: TimerNode) {
        slots[index(of: node.filedAt)].clean = false
    }

    /// The next slot to take out: the occupied one that begins first.
    func nextSlot() -> (level: Int, slot: Int, start: Int64)? {
        guard count > 0 else { return nil }
        var best: (level: Int, slot: Int, start: Int64)?
        for level in 0..<Self.levels where occupied[level] != 0 {
            // Nodes of a level lie at or after `elapsed`'s own slot there.
            let position = Int((elapsed >> Self.shift(level)) & Int64(Self.slotsPerLevel - 1))
            let ahead = occupied[level] & (~0 << UInt64(position))
            let slot = (ahead != 0 ? ahead : occupied[level]).trailingZeroBitCount
            let begins = start(level: level, slot: slot)
            if best == nil || begins < best!.start { best = (level, slot, begins) }
        }
        return best
    }

    /// Takes out the slot ``nextSlot()`` named, moving `elapsed` to its start
    /// and the frontier to its end (level 0: its nodes leave the wheel) or
    /// start (a higher level: its nodes are filed again below).
    mutating func take(level: Int, slot: Int, start: Int64) -> NodeList {
        let i = level * Self.slotsPerLevel + slot
        let list = slots[i]
        slots[i] = NodeList()
        occupied[level] &= ~(1 << UInt64(slot))
        count -= list.count
        elapsed = Swift.max(elapsed, start)
        frontier = Swift.max(frontier, level == 0 ? start.saturatingAdd(Self.slotWidth) : start)
        return list
    }

    /// Files a whole list taken out of a higher slot in one step when it is
    /// clean and falls into one empty slot: O(1). False when it must be filed
    /// node by node.
    mutating func insert(whole list: NodeList) -> Bool {
        guard list.clean, let first = list.head, let last = list.tail else { return false }
        let (a, b) = (first._withUnsafeGuaranteedRef { $0.filedAt }, last._withUnsafeGuaranteedRef { $0.filedAt })
        guard accepts(a), accepts(b) else { return false }
        let i = index(of: a)
        guard i == index(of: b), slots[i].isEmpty else { return false }
        slots[i] = list
        occupied[i >> Self.slotBits] |= 1 << UInt64(i & (Self.slotsPerLevel - 1))
        count += list.count
        return true
    }

    /// Moves `elapsed` and the frontier up to the level-0 slot holding
    /// `instant` when no filed node's slot begins by then, so that filing
    /// stays relative to the present and deadlines before it go to the
    /// queue's heaps. (A node's slot follows from `elapsed` and its `filedAt`
    /// unchanged: `elapsed` stays before every occupied slot's start.)
    mutating func advance(to instant: Int64) {
        if let next = nextSlot(), next.start <= instant { return }
        elapsed = Swift.max(elapsed, instant & ~(Self.slotWidth - 1))
        frontier = Swift.max(frontier, elapsed)
    }

    #if DEBUG
    /// Every filed node, slot by slot (invariant checks).
    func forEachList(_ body: (Int64, NodeList) -> Void) {
        for (i, list) in slots.enumerated() where !list.isEmpty {
            body(start(level: i >> Self.slotBits, slot: i & (Self.slotsPerLevel - 1)), list)
        }
    }

    #endif
}
