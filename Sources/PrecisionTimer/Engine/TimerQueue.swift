/// The pending timers of one clock, in the structure that serves each best:
///
/// - the **wheel** (``TimerWheel``) holds timers due from ``lookahead``
///   (about 67 ms) ahead of now to about two years out: the many timeouts that are
///   mostly cancelled or pushed back before they fire. Filing, cancelling and
///   moving a timer later there are O(1).
/// - the **run**, a ``NodeList`` in (deadline, scheduling) order, receives
///   each level-0 slot of the wheel as its start comes within ``lookahead``:
///   its zero-leeway timers, ready to fire in order, a same-instant batch of
///   any size in O(1) per timer. A zero-leeway timer scheduled due before
///   the wheel's frontier joins it too when it sorts after its last timer
///   (the next of a same-instant batch, a grid's next tick), in O(1). A
///   large batch already due in the heaps waits at its head, past what one
///   collection takes.
/// - two **heaps**, the same nodes by deadline (what is due) and by latest
///   acceptable instant (when to wake), hold the other timers due before the
///   wheel's frontier when scheduled, timers with leeway once their slot
///   comes up (so coalescing works on exact instants), and deadlines out of
///   the wheel's range.
///
/// Same-instant timers fire in the order they were scheduled wherever they
/// wait: each (re)schedule takes a sequence number, kept by the node. The
/// queue keeps one retain per queued node.
struct TimerQueue {
    var byDeadline = TimerHeap<ByDeadline>()
    var byLatest = TimerHeap<ByLatest>()
    private(set) var run = NodeList()
    private(set) var wheel: TimerWheel
    /// The latest instant at which a bulk removal left due nodes at the head
    /// of the run: a node there with leeway was due by then (the invariants'
    /// check; the run otherwise holds zero-leeway nodes only).
    private(set) var dueThrough: Int64 = .min
    private var nextSequence: UInt64 = 0

    /// How far ahead of now the wheel's slots are taken out: 64 level-0
    /// slots, about 67 ms. A slot reaches the run (or the heaps) between this
    /// long and half as long before it begins, so the thread takes it out on
    /// a wake-up it makes anyway, or on one of its own with that much leeway:
    /// timers due within this window never wait in the wheel, and the wheel
    /// costs a busy scheduler next to no wake-ups of its own.
    static let lookahead = TimerWheel.slotWidth << TimerWheel.slotBits

    /// Whether a zero-leeway timer due before the wheel's frontier joins the
    /// run when it sorts after the run's last timer (false only in a queue of
    /// heaps only).
    private let runTakesNewTimers: Bool

    /// A queue whose wheel files deadlines from `wheelFrom` on (`Int64.max`:
    /// a queue of heaps only, for tests of the heaps' paths).
    init(wheelFrom: Int64 = 0) {
        wheel = TimerWheel(elapsed: wheelFrom)
        runTakesNewTimers = wheelFrom != .max
    }

    var isEmpty: Bool { count == 0 }
    var count: Int { byDeadline.count + run.count + wheel.count }

    /// Queues `node` under its current deadline and latest instant, taking one
    /// retain on it and a new place in the scheduling order. Returns the
    /// instant of the node's clock by which the engine must now look at the
    /// queue when that may be earlier than before (the node heads the heap
    /// of latest instants, or its wheel slot was empty); nil otherwise.
    @discardableResult
    mutating func insert(_ node: TimerNode) -> Int64? {
        node.sequence = nextSequence
        nextSequence &+= 1
        return place(.passRetained(node))
    }

    /// Puts a node the queue holds a retain on where its deadline belongs.
    private mutating func place(_ ref: Unmanaged<TimerNode>) -> Int64? {
        let node = ref.takeUnretainedValue()
        let deadline = node.deadline
        if wheel.accepts(deadline) {
            node.listed = true
            guard wheel.insert(ref) else { return nil }
            return Self.cascadeLatest(slotStart: wheel.slotStart(of: deadline))
        }
        if node.leeway == 0 && deadline < wheel.frontier && runTakesNewTimers
            && run.tail.map({ last in last._withUnsafeGuaranteedRef { !NodeList.precedes(node, $0) } }) ?? true
        {
            // Due before the frontier (not past the wheel's range) with no
            // leeway, and not before the run's last timer (a same-instant
            // batch, a timer on a grid): it joins the run in O(1), ready to
            // fire in order.
            node.listed = true
            node.filedAt = deadline
            let wasEmpty = run.isEmpty
            run.append(ref)
            return wasEmpty ? deadline : nil
        }
        node.listed = false
        byDeadline.insert(ref, tieBreak: Int64(bitPattern: node.sequence))
        byLatest.insert(ref, tieBreak: deadline)
        return node.latestSlot == 0 ? node.latest : nil
    }

    /// The wake the wheel asks for ahead of a slot: from `lookahead` before its
    /// start, with half of that as leeway (an ordinary sleep, never a spin).
    @inline(__always)
    static func cascadeLatest(slotStart: Int64) -> Int64 {
        slotStart.saturatingSubtract(lookahead / 2)
    }

    /// Whether `node`, queued here, waits in the wheel: a later deadline can
    /// then be taken in place (``movedLaterInPlace(_:)``).
    @inline(__always)
    func waitsInWheel(_ node: TimerNode) -> Bool { node.listed && wheel.holds(node) }

    /// `node`, waiting in the wheel, now has a later deadline (already set):
    /// it takes a new place in the scheduling order and stays filed where it
    /// is until that slot comes up. O(1), touching no other node.
    mutating func movedLaterInPlace(_ node: TimerNode) {
        node.sequence = nextSequence
        nextSequence &+= 1
        wheel.markMoved(node)
    }

    /// Unqueues `node` and gives back the queue's retain. The caller holds its own
    /// reference, so the node is never freed (and its handler never released)
    /// while the engine's lock is held.
    mutating func remove(_ node: TimerNode) {
        if node.listed {
            if wheel.holds(node) { wheel.remove(node) } else { run.remove(node) }
            node.listed = false
        } else {
            byDeadline.remove(node)
            byLatest.remove(node)
        }
        Unmanaged.passUnretained(node).release()
    }

    // MARK: - The wheel's slots coming up

    /// Takes out every wheel slot that begins by `instant`, in order.
    mutating func cascade(through instant: Int64) {
        while let next = wheel.nextSlot(), next.start <= instant {
            takeOut(next)
        }
        wheel.advance(to: instant)
    }

    /// Takes slots out until the heaps and the run hold the earliest timer
    /// (virtual time asks for the exact next instant, with no wake-ups of its
    /// own for the wheel).
    mutating func settle() {
        while let next = wheel.nextSlot() {
            if let known = earliestHeld()?.latest, next.start > known { return }
            takeOut(next)
        }
    }

    private mutating func takeOut(_ next: (level: Int, slot: Int, start: Int64)) {
        var list = wheel.take(level: next.level, slot: next.slot, start: next.start)
        if next.level > 0 {
            if wheel.insert(whole: list) { return }
            while let ref = list.popFirst() {
                _ = place(ref)
            }
            return
        }
        // Level 0: the slot's timers leave the wheel. A clean list of
        // zero-leeway timers joins the run whole.
        if list.clean && !list.hasLeeway {
            run.append(contentsOf: list)
            return
        }
        var ready: [Unmanaged<TimerNode>] = []
        while let ref = list.popFirst() {
            let node = ref.takeUnretainedValue()
            if node.leeway == 0 && node.deadline < wheel.frontier {
                node.filedAt = node.deadline
                ready.append(ref)
            } else {
                _ = place(ref)  // leeway: the heaps; moved later in place: filed again
            }
        }
        ready.sort { a, b in
            a._withUnsafeGuaranteedRef { x in b._withUnsafeGuaranteedRef { y in NodeList.precedes(x, y) } }
        }
        for ref in ready { run.append(ref) }
    }

    // MARK: - What is due, and when

    /// When the engine must be awake for what a queue holds: the earliest
    /// latest-acceptable instant, its leeway, and the earliest deadline.
    typealias Wake = (latest: Int64, leeway: Int64, deadline: Int64)

    /// `best` with `candidate` taken in: the earlier latest instant (and its
    /// leeway), and the earlier deadline of the two.
    @inline(__always)
    private static func merging(_ best: Wake?, _ candidate: Wake) -> Wake {
        guard var best else { return candidate }
        if candidate.latest < best.latest { (best.latest, best.leeway) = (candidate.latest, candidate.leeway) }
        best.deadline = Swift.min(best.deadline, candidate.deadline)
        return best
    }

    /// The earliest latest-acceptable instant among the heaps and the run,
    /// its leeway, and the earliest deadline there ("never" left out).
    func earliestHeld() -> Wake? {
        var best: Wake?
        if let l = byLatest.top, l.latest != .max {
            best = (l.latest, l.leeway, byDeadline.topKey!)
        }
        if let first = run.head?.takeUnretainedValue() {
            best = Self.merging(best, (first.deadline, 0, first.deadline))
        }
        return best
    }

    /// What the engine thread must be awake for next: ``earliestHeld()``, or
    /// the wheel's next slot when that comes first (taken out from
    /// `lookahead` before it begins, with half of that as leeway).
    func earliest() -> Wake? {
        let held = earliestHeld()
        guard let next = wheel.nextSlot() else { return held }
        return Self.merging(held, (Self.cascadeLatest(slotStart: next.start), Self.lookahead / 2,
                                   next.start.saturatingSubtract(Self.lookahead)))
    }

    /// Moves up to `limit` nodes due at `now` into `due`, in (deadline,
    /// scheduling) order, handing over the queue's retain with each (the
    /// caller takes it with `takeRetainedValue`); first takes out the wheel's
    /// slots that begin by `now` + ``lookahead``. From the heaps one removal at
    /// a time while few are due there; past a batch size with nothing due in
    /// the run, one O(n) rebuild of both heaps (which takes all of them).
    mutating func removeDue(at now: Int64, into due: inout [Unmanaged<TimerNode>], limit: Int = .max) {
        cascade(through: now.saturatingAdd(Self.lookahead))
        var taken = 0
        var fromHeaps = 0
        while taken < limit {
            let heapTop = byDeadline.topEntry.flatMap { $0.key <= now ? $0 : nil }
            let runHead = run.head.flatMap { ref in ref._withUnsafeGuaranteedRef { $0.deadline <= now } ? ref : nil }
            if let entry = heapTop {
                let runFirst = runHead.map { ref in
                    ref._withUnsafeGuaranteedRef { n in
                        (n.deadline, Int64(bitPattern: n.sequence)) < (entry.key, entry.tieBreak)
                    }
                } ?? false
                if !runFirst {
                    if fromHeaps == Self.bulkThreshold && runHead == nil && byDeadline.count > Self.bulkThreshold {
                        removeDueInBulk(at: now, into: &due, limit: limit - taken)
                        return
                    }
                    entry.node._withUnsafeGuaranteedRef { node in
                        byDeadline.remove(node)
                        byLatest.remove(node)
                    }
                    due.append(entry.node)
                    fromHeaps += 1
                    taken += 1
                    continue
                }
            }
            guard runHead != nil, let first = run.popFirst() else { return }
            first._withUnsafeGuaranteedRef { $0.listed = false }
            due.append(first)
            taken += 1
        }
    }

    /// Past this many due timers in the heaps in one collection, `removeDue`
    /// rebuilds instead.
    static let bulkThreshold = 256

    /// Every node due at `now` leaves both heaps in one rebuild; the first
    /// `limit` of them (in order) go to `due`. The rest wait at the head of
    /// the run, in order, for the next collections: nothing in the run is due
    /// yet, so they precede all of it, and the first handler of a large batch
    /// runs without waiting for the whole batch to be taken.
    private mutating func removeDueInBulk(at now: Int64, into due: inout [Unmanaged<TimerNode>], limit: Int) {
        var leaving = byDeadline.removeAll { $0.key <= now }
        leaving.sort { $0 < $1 }
        _ = byLatest.removeAll { $0.tieBreak <= now }  // tie-break = the node's deadline
        let handed = Swift.min(Swift.max(0, limit), leaving.count)
        due.reserveCapacity(due.count + handed)
        for entry in leaving[..<handed] {
            due.append(entry.node)
        }
        guard handed < leaving.count else { return }
        var waiting = NodeList()
        for entry in leaving[handed...] {
            entry.node._withUnsafeGuaranteedRef { node in
                node.listed = true
                node.filedAt = node.deadline
            }
            waiting.append(entry.node)
        }
        waiting.append(contentsOf: run)
        run = waiting
        dueThrough = Swift.max(dueThrough, now)
    }
}
