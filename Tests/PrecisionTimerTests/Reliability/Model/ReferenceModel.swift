// A pure reference model of TimerScheduler under virtual time, for ModelTests.
// The operations it runs and the events it records are in ModelVocabulary.swift;
// random sequences of them come from SequenceGenerator.swift.
//
// No engine code is reused: the model states the documented meaning (the grid,
// the missed-tick policies, leeway wake-ups, suspend/resume/cancel/fire, weak
// owners, interval changes) in plain value types, plus the rules the engine is
// being changed to:
//   R1 suspend() is synchronous: a tick collected in the same wake-up batch but
//      not yet delivered when its timer is suspended is dropped, and counted
//      (1 + its own missed) in the missed of the next scheduled tick delivered.
//   R2 a cancelled timer (cancel, last handle released, owner death) gets no
//      further handler call, ticks already collected included.
//   R3 releasing a handle inside a handler never hangs.
//   R4 setInterval keeps the pending tick's deadline and continues with the new
//      interval from there, whatever the tick index.
//   R5 a deadline of Instant.max or an interval too large to fit means "never
//      fires" (no error); such a timer can be cancelled.
// and the exact grid:
//   G1 a period is exact (a Duration keeps its attoseconds; `count` ticks per
//      `span` is span/count), at least 1 ns. Tick k of a grid anchored at
//      (origin, originIndex) is due at origin + round((k − originIndex) × period),
//      the product exact and rounded once to the nearest ns (halves up);
//      saturating at Instant.max ("never"). Re-anchoring moves (origin,
//      originIndex): the delay policy at the fire instant, setInterval /
//      setRate / setNextDeadline at the pending tick (its rounded deadline).
//      Skip fires the latest tick whose rounded deadline is ≤ now.
//   G2 in the handler of tick k, tick.setInterval(p) re-anchors at (k, tick k's
//      deadline) with period p, tick.setNextDeadline(d) anchors at (k + 1, d);
//      either way the pending index becomes max(pending, k + 1). On a manual
//      tick they act as the timer's setInterval / setNextDeadline; on a
//      one-shot they do nothing.
// and the one-shot's re-arm:
//   P1 setNextDeadline(d) on a one-shot is its reschedule(at: d): a pending one
//      moves to d (queued anew: after the others due at d), a suspended one keeps
//      d for its resume, a collected one drops that fire and waits for d, and a
//      fired one fires again at d unless it was cancelled or let go. A fire()
//      asked for and not yet collected is dropped too. A fired one-shot keeps
//      its handler while a handle lives.
// and the nested advance:
//   N1 a handler that advances the clock first gets the ticks collected with its
//      own and not yet delivered, in order, before the clock moves; then the
//      clock advances as from outside (what falls due on the way fires,
//      wake-up by wake-up), all inside its call.

// MARK: - Saturating Int64 arithmetic (the model's own)

@inline(__always) func mSatAdd(_ a: Int64, _ b: Int64) -> Int64 {
    let (r, o) = a.addingReportingOverflow(b)
    return o ? (b > 0 ? .max : .min) : r
}

@inline(__always) func mSatSub(_ a: Int64, _ b: Int64) -> Int64 {
    let (r, o) = a.subtractingReportingOverflow(b)
    return o ? (b < 0 ? .max : .min) : r
}

// MARK: - Exact periods (the model's own rational arithmetic)

/// A period of `num / den` nanoseconds, exact (G1).
struct MPeriod: Equatable, Sendable {
    static let attosPerNs: Int128 = 1_000_000_000
    let num: Int128
    let den: Int128

    init(num: Int128, den: Int128) {
        precondition(num > 0 && den > 0)
        if num < den {  // shorter than 1 ns: the documented clamp to 1 ns
            self.num = 1
            self.den = 1
            return
        }
        var (a, b) = (num, den)
        while b != 0 { (a, b) = (b, a % b) }
        self.num = num / a
        self.den = den / a
    }

    init(_ interval: MInterval) {
        switch interval {
        case .ns(let n): self.init(num: Int128(n), den: 1)
        case .attos(let a): self.init(num: a, den: Self.attosPerNs)
        case let .rate(count, span): self.init(num: span, den: Int128(count) * Self.attosPerNs)
        case .tooLarge: self.init(num: MInterval.tooLargeAttos, den: Self.attosPerNs)
        }
    }

    /// round-half-up(n × num / den), saturating at Int64.max / Int64.min. (On a
    /// grid n ≥ 0; a negative n is handled rather than trapped on.)
    func offset(ofTicks n: Int64) -> Int64 {
        let (p, o1) = Int128(n).multipliedReportingOverflow(by: num)
        let (twice, o2) = p.multipliedReportingOverflow(by: 2)
        // On overflow |n × num| ≥ 2^126 and den < 2^63: far past Int64's range.
        if o1 || o2 { return n < 0 ? .min : .max }
        // floor(n·num/den + 1/2) = floor((2·n·num + den) / (2·den)).
        let x = twice + den, d = 2 * den
        var q = x / d
        if x % d != 0 && x < 0 { q -= 1 }  // Swift's / truncates toward zero
        return q >= Int128(Int64.max) ? .max : (q <= Int128(Int64.min) ? .min : Int64(q))
    }

    /// Whole nanoseconds, rounded down.
    var floorNanoseconds: Int64 {
        let q = num / den
        return q >= Int128(Int64.max) ? .max : Int64(q)
    }

    /// The leeway cap: 1 ns under the whole nanoseconds, so that a tick's
    /// window ends before the next tick is due.
    var leewayCap: Int64 { Swift.max(0, floorNanoseconds - 1) }

    /// floor(span / period) for span ≥ 0: an estimate of the ticks in `span` ns.
    func ticks(in span: Int64) -> Int64 {
        guard span > 0 else { return 0 }
        let (p, o) = Int128(span).multipliedReportingOverflow(by: den)
        if o { return .max }
        let q = p / num
        return q >= Int128(Int64.max) ? .max : Int64(q)
    }
}

// MARK: - The model

/// The documented meaning of a virtual TimerScheduler, run on one op list.
struct ReferenceModel {
    static let origin: Int64 = 1_000_000_000  // VirtualClock's default monotonic start

    enum State { case scheduled, suspended, firing, done, cancelled }

    struct Timer {
        let id: Int
        let repeating: Bool
        let policy: MPolicy
        let form: MForm
        let actions: [[MAction]]
        /// The exact period (G1); 1 ns for a one-shot (unused). A too-large one
        /// (R5) saturates every later tick at Int64.max.
        var period: MPeriod
        var leeway: Int64
        /// Tick k is due at origin + round((k − originIndex) × period), saturating (G1).
        var originIndex: Int64 = 0
        var origin: Int64
        var nextIndex: Int64 = 0
        var lastFired: Int64 = -1
        /// The pending tick's deadline, `deadline(ofTick: nextIndex)` (kept by
        /// `anchor` and `moveTo`); a one-shot's deadline.
        private(set) var deadline: Int64
        var state = State.suspended
        var seq: UInt64 = 0
        /// Bumped by every suspend (of a suspended timer too: a fire() asked for
        /// since is dropped) and by a reschedule that drops a collected one-shot
        /// fire: a collected tick or requested fire of an older epoch is dropped (R1).
        var epoch = 0
        /// Dropped ticks (R1) to report in the next delivered scheduled tick.
        var droppedMissed: Int64 = 0
        /// The one-shot tick being delivered is a manual one.
        var firingManual = false
        /// …asked for while the one-shot was suspended: a reschedule that drops
        /// it leaves the one-shot suspended (P1), and a resume makes it no longer so.
        var firingFromSuspended = false
        var calls = 0
        var harnessHoldsHandle: Bool
        var handlerReleased = false

        init(id: Int, repeating: Bool, policy: MPolicy, form: MForm, actions: [[MAction]], period: MPeriod,
             leeway: Int64, origin: Int64, harnessHoldsHandle: Bool) {
            (self.id, self.repeating, self.policy, self.form, self.actions) = (id, repeating, policy, form, actions)
            (self.period, self.leeway, self.origin, self.deadline) = (period, leeway, origin, origin)
            self.harnessHoldsHandle = harnessHoldsHandle
        }

        func deadline(ofTick k: Int64) -> Int64 {
            mSatAdd(origin, period.offset(ofTicks: mSatSub(k, originIndex)))
        }

        /// The latest tick whose rounded deadline is ≤ now, at least the pending one.
        func latestDue(at now: Int64) -> Int64 {
            guard deadline < now else { return nextIndex }
            // floor((now − origin) / period) is within one of the answer; the
            // definition (deadline(k) ≤ now < deadline(k + 1)) settles it.
            var k = Swift.max(nextIndex, mSatAdd(originIndex, period.ticks(in: mSatSub(now, origin))))
            while k < .max && deadline(ofTick: k + 1) <= now { k += 1 }
            while k > nextIndex && deadline(ofTick: k) > now { k -= 1 }
            return k
        }

        /// Re-anchors the grid: tick k is due at `instant` (G1).
        mutating func anchor(tick k: Int64, at instant: Int64) {
            originIndex = k
            origin = instant
            deadline = deadline(ofTick: nextIndex)
        }

        mutating func moveTo(_ k: Int64) {
            nextIndex = k
            deadline = deadline(ofTick: k)
        }

        /// A new period from the pending tick on (setInterval / setRate): the
        /// pending tick keeps its rounded deadline.
        mutating func setPeriod(_ p: MPeriod) {
            origin = deadline
            originIndex = nextIndex
            period = p
            leeway = Swift.min(leeway, p.leewayCap)
        }
    }

    struct Owner {
        var harnessHolds = true
        /// Handler calls of its timer running now (the owner is held meanwhile).
        var callRefs = 0
        let cycle: Bool
    }

    struct Collected {
        let timer: Int
        let index: Int64
        let deadline: Int64
        let missed: Int64
        let manual: Bool
        let epoch: Int
    }

    var now: Int64 = origin
    var timers: [Int: Timer] = [:]
    var owners: [Int: Owner] = [:]  // keyed by the id of the timer the owner stores
    /// `fire()` requests not yet collected, with the timer's suspend epoch at the
    /// request: a suspend after the request drops it (no call starts until resume).
    var manualFires: [(timer: Int, at: Int64, epoch: Int)] = []
    var seqCounter: UInt64 = 0
    var events: [MEvent] = []
    /// Where the model applied one of the rules R1-R5 (keyed by the number of
    /// events recorded by then): what a divergence there is about.
    var notes: [(at: Int, rule: String)] = []
    /// Ticks collected and not yet delivered, in delivery order: a nested
    /// advance (N1) delivers those of the wake-up it runs in first.
    var pending: [Collected] = []
    var callCount = 0
    /// Stop (a sequence too heavy to be worth running) past this many calls.
    var callBudget = 4_000
    var exhausted = false

    mutating func note(_ rule: String) { notes.append((events.count, rule)) }

    static func run(_ ops: [MOp], callBudget: Int = 4_000) -> (events: [MEvent], exhausted: Bool) {
        let r = runWithNotes(ops, callBudget: callBudget)
        return (r.events, r.exhausted)
    }

    static func runWithNotes(_ ops: [MOp], callBudget: Int = 4_000)
        -> (events: [MEvent], exhausted: Bool, notes: [(at: Int, rule: String)]) {
        var m = ReferenceModel()
        m.callBudget = callBudget
        for (i, op) in ops.enumerated() {
            m.apply(op, index: i)
            if m.exhausted { break }
        }
        m.events.append(.end)
        return (m.events, m.exhausted, m.notes)
    }

    mutating func apply(_ op: MOp, index: Int) {
        switch op {
        case .nop: break
        case .create(let spec): create(spec)
        case .advance(let d): advance(to: mSatAdd(now, Swift.max(0, d)))
        case .act(let a): perform(a, current: nil)
        }
    }

    // MARK: Lifecycle

    mutating func create(_ spec: MTimerSpec) {
        var t: Timer
        switch spec.kind {
        case let .oneShot(at, lw):
            if at == .max { note("R5 one-shot at Instant.max") }
            let d = at == .max ? Int64.max : mSatAdd(now, offset(at))
            t = Timer(id: spec.id, repeating: false, policy: .skip, form: spec.form, actions: spec.actions,
                      period: MPeriod(num: 1, den: 1), leeway: lw, origin: d, harnessHoldsHandle: true)
        case let .repeating(iv, start, lw, policy):
            let period = MPeriod(iv)
            if iv == .tooLarge { note("R5 interval too large") }
            if start == .max { note("R5 start at Instant.max") }
            if period.den != 1 { note("G1 exact fractional period") }
            let first: Int64
            switch start {
            case nil: first = mSatAdd(now, period.offset(ofTicks: 1))  // one (rounded) period from now
            case .max?: first = .max
            case .offset(let o)?: first = mSatAdd(now, o)
            }
            t = Timer(id: spec.id, repeating: true, policy: policy, form: spec.form, actions: spec.actions,
                      period: period, leeway: Swift.min(lw, period.leewayCap), origin: first,
                      harnessHoldsHandle: true)
        }
        switch spec.form {
        case .plain: break
        case .weakOwner(let held):
            t.harnessHoldsHandle = held
            owners[spec.id] = Owner(cycle: false)
        case .cycleOwner:
            t.harnessHoldsHandle = false
            owners[spec.id] = Owner(cycle: true)
        }
        timers[spec.id] = t
        enqueue(spec.id)
    }

    func offset(_ d: MDeadline) -> Int64 {
        if case .offset(let o) = d { return o }
        return .max
    }

    mutating func enqueue(_ id: Int) {
        timers[id]!.state = .scheduled
        timers[id]!.seq = seqCounter
        seqCounter += 1
    }

    /// The harness can reach the timer: it holds the handle, or the owner storing it.
    func accessible(_ id: Int) -> Bool {
        guard let t = timers[id] else { return false }
        return t.harnessHoldsHandle || owners[id]?.harnessHolds == true
    }

    func ownerAlive(_ id: Int) -> Bool {
        guard let o = owners[id] else { return false }
        return o.harnessHolds || o.callRefs > 0 || (o.cycle && !timers[id]!.handlerReleased)
    }

    /// Some handle of the timer is still referenced.
    func handleAlive(_ id: Int) -> Bool {
        timers[id]!.harnessHoldsHandle || ownerAlive(id)
    }

    mutating func cancelTimer(_ id: Int) {
        switch timers[id]!.state {
        case .cancelled: return
        case .done:
            // A fired one-shot stays fired; cancelling it lets go of the handler
            // it kept for a reschedule.
            timers[id]!.handlerReleased = true
        case .scheduled, .suspended, .firing:
            timers[id]!.state = .cancelled
            timers[id]!.handlerReleased = true
        }
    }

    /// Releasing the last handle cancels (R2), and that may release an owner.
    mutating func reconcile() {
        var changed = true
        while changed {
            changed = false
            for id in timers.keys.sorted() {
                let s = timers[id]!.state
                if s != .cancelled && s != .done && !handleAlive(id) {
                    cancelTimer(id)
                    changed = true
                } else if s == .done && !timers[id]!.handlerReleased && !handleAlive(id) {
                    cancelTimer(id)  // the handle's release lets go of a fired one-shot's handler
                    changed = true
                }
            }
        }
    }

    // MARK: Actions

    /// The tick whose handler performs an action.
    struct CurrentTick {
        let id: Int
        let index: Int64
        let deadline: Int64
        let manual: Bool
    }

    mutating func perform(_ a: MAction, current: CurrentTick?) {
        switch a {
        case .busy(let d):
            now = mSatAdd(now, Swift.max(0, d))
        case .advanceClock(let d):
            if !pending.isEmpty { note("N1 nested advance delivers the collected ticks first") }
            advance(to: mSatAdd(now, Swift.max(0, d)))
        case .cancel(let id):
            guard accessible(id) else { return }
            cancelTimer(id)
            reconcile()
        case .suspend(let id):
            guard accessible(id) else { return }
            let t = timers[id]!
            if t.state == .scheduled || t.state == .firing {
                // R1: whatever was collected or requested before is dropped;
                // a one-shot collected (by its deadline or by fire()) goes back
                // to suspended with its deadline.
                timers[id]!.state = .suspended
                timers[id]!.epoch += 1
                timers[id]!.firingFromSuspended = false
            } else if t.state == .suspended {
                timers[id]!.epoch += 1  // R1: a fire() asked for since the last suspend is dropped
            }
        case .resume(let id):
            guard accessible(id) else { return }
            if timers[id]!.state == .firing && timers[id]!.firingFromSuspended {
                timers[id]!.firingFromSuspended = false  // fired by hand, then done
                return
            }
            guard timers[id]!.state == .suspended else { return }
            let t = timers[id]!
            if t.repeating && t.policy == .burst && t.deadline < now {
                // Ticks that fell due while suspended are one fire, never a burst:
                // the latest due tick is the pending one.
                timers[id]!.moveTo(t.latestDue(at: now))
            }
            enqueue(id)
        case .fire(let id):
            guard accessible(id) else { return }
            let s = timers[id]!.state
            if s == .scheduled || s == .suspended { manualFires.append((id, now, timers[id]!.epoch)) }
        case .setInterval(let id, let iv):
            guard accessible(id), timers[id]!.repeating else { return }
            let s = timers[id]!.state
            guard s == .scheduled || s == .suspended else { return }
            if iv == .tooLarge { note("R5 setInterval too large") }
            if timers[id]!.nextIndex > 1_000_000 { note("R4 setInterval at a huge tick index") }
            note(iv.isRate ? "G1 setRate" : "G1 setInterval")
            timers[id]!.setPeriod(MPeriod(iv))   // the pending tick keeps its deadline
            if s == .scheduled { enqueue(id) }
        case .setNextDeadline(let id, let d) where timers[id].map({ !$0.repeating }) == true:
            // A one-shot's reschedule(at:): re-armed in place from every state
            // but cancelled (or fired and let go).
            guard accessible(id) else { return }
            let t = timers[id]!
            let dl = d == .max ? Int64.max : mSatAdd(now, offset(d))
            switch t.state {
            case .cancelled:
                return
            case .done where t.handlerReleased:
                return
            case .scheduled, .suspended:
                // A fire() asked for and not yet collected is dropped, as a
                // collected one is (below).
                if manualFires.contains(where: { $0.timer == id }) {
                    manualFires.removeAll { $0.timer == id }
                    note("P1 reschedule drops a fire() not yet collected")
                }
            case .firing, .done:
                break
            }
            switch t.state {
            case .cancelled:
                return
            case .done where t.handlerReleased:
                return
            case .suspended:
                timers[id]!.anchor(tick: 0, at: dl)
                note("P1 reschedule a suspended one-shot")
                return
            case .firing where t.firingFromSuspended:
                timers[id]!.epoch += 1  // the fire() asked for while suspended is dropped
                timers[id]!.firingFromSuspended = false
                timers[id]!.state = .suspended
                timers[id]!.anchor(tick: 0, at: dl)
                note("P1 reschedule a one-shot collected by fire() while suspended")
                return
            case .firing:
                timers[id]!.epoch += 1  // the collected fire is dropped
                note("P1 reschedule a collected one-shot")
            case .done:
                note("P1 reschedule a fired one-shot")
            case .scheduled:
                note("P1 reschedule a pending one-shot")
            }
            timers[id]!.anchor(tick: 0, at: dl)
            enqueue(id)
        case .setNextDeadline(let id, let d):
            guard accessible(id), timers[id]!.repeating else { return }
            let s = timers[id]!.state
            guard s == .scheduled || s == .suspended else { return }
            if d == .max { note("R5 setNextDeadline(Instant.max)") }
            let dl = d == .max ? Int64.max : mSatAdd(now, offset(d))
            timers[id]!.anchor(tick: timers[id]!.nextIndex, at: dl)
            if s == .scheduled { enqueue(id) }
        case .releaseHandle(let id):
            guard timers[id] != nil else { return }
            timers[id]!.harnessHoldsHandle = false
            reconcile()
        case .dropOwner(let id):
            guard owners[id] != nil else { return }
            owners[id]!.harnessHolds = false
            reconcile()
        case .cancelFromTick:
            guard let current else { return }
            cancelTimer(current.id)
            reconcile()
        case .tickSetInterval(let iv):
            guard let c = current, timers[c.id]!.repeating else { return }
            let s = timers[c.id]!.state
            guard s == .scheduled || s == .suspended else { return }
            if iv == .tooLarge { note("R5 tick.setInterval too large") }
            var t = timers[c.id]!
            if c.manual {
                note("G2 tick.setInterval on a manual tick")
                t.setPeriod(MPeriod(iv))
            } else {
                note("G2 tick.setInterval")
                t.period = MPeriod(iv)
                t.leeway = Swift.min(t.leeway, t.period.leewayCap)
                t.anchor(tick: c.index, at: c.deadline)
                t.moveTo(Swift.max(t.nextIndex, mSatAdd(c.index, 1)))
            }
            timers[c.id] = t
            if s == .scheduled { enqueue(c.id) }
        case .tickSetNextDeadline(let d):
            guard let c = current, timers[c.id]!.repeating else { return }
            let s = timers[c.id]!.state
            guard s == .scheduled || s == .suspended else { return }
            if d == .max { note("R5 tick.setNextDeadline(Instant.max)") }
            let dl = d == .max ? Int64.max : mSatAdd(now, offset(d))
            var t = timers[c.id]!
            if c.manual {
                note("G2 tick.setNextDeadline on a manual tick")
                t.anchor(tick: t.nextIndex, at: dl)
            } else {
                note("G2 tick.setNextDeadline")
                t.anchor(tick: mSatAdd(c.index, 1), at: dl)
                t.moveTo(Swift.max(t.nextIndex, mSatAdd(c.index, 1)))
            }
            timers[c.id] = t
            if s == .scheduled { enqueue(c.id) }
        }
    }

    // MARK: Time

    /// The virtual clock's advance: fire what is due now; else wake at the
    /// earliest latest-acceptable instant among pending timers (if by target).
    mutating func advance(to target: Int64) {
        while !exhausted {
            if fireDue() { continue }
            guard let wake = nextWake(), wake <= target else { break }
            if wake > now { now = wake }
        }
        if target > now { now = target }
    }

    func nextWake() -> Int64? {
        var best = Int64.max
        for t in timers.values where t.state == .scheduled {
            best = Swift.min(best, mSatAdd(t.deadline, t.leeway))
        }
        guard best != .max else { return nil }  // nothing pending, or only "never"
        return Swift.max(now, best)
    }

    /// One wake-up: collect manual fires, then every timer due, then deliver.
    mutating func fireDue() -> Bool {
        var batch: [Collected] = []
        for (id, at, epoch) in manualFires {
            let t = timers[id]!
            guard t.state == .scheduled || t.state == .suspended else { continue }
            guard t.epoch == epoch else {
                note("R1 fire() requested before a suspend dropped")
                continue
            }
            if !t.repeating {
                timers[id]!.state = .firing
                timers[id]!.firingManual = true
                timers[id]!.firingFromSuspended = t.state == .suspended
            }
            batch.append(Collected(timer: id, index: t.nextIndex, deadline: at, missed: 0, manual: true,
                                   epoch: t.epoch))
        }
        manualFires.removeAll()
        // A deadline of Int64.max is never due, even at the end of time.
        let n = Swift.min(now, .max - 1)
        let due = timers.values.filter { $0.state == .scheduled && $0.deadline <= n }
            .sorted { ($0.deadline, $0.seq) < ($1.deadline, $1.seq) }.map(\.id)
        for id in due {
            var t = timers[id]!
            if !t.repeating {
                t.state = .firing
                t.firingManual = false
                timers[id] = t
                batch.append(Collected(timer: id, index: 0, deadline: t.deadline, missed: 0, manual: false,
                                       epoch: t.epoch))
                continue
            }
            let k = t.policy == .skip ? t.latestDue(at: n) : t.nextIndex
            let dl = t.deadline(ofTick: k)
            batch.append(Collected(timer: id, index: k, deadline: dl, missed: k - t.lastFired - 1, manual: false,
                                   epoch: t.epoch))
            t.lastFired = k
            if t.policy == .delay {
                t.anchor(tick: k, at: n)   // re-anchor: tick k is "due" at the fire instant
            }
            t.moveTo(mSatAdd(k, 1))
            timers[id] = t
            enqueue(id)
        }
        // N1: a nested advance first delivers what its wake-up collected.
        let waiting = !pending.isEmpty
        pending.append(contentsOf: batch)
        guard waiting || !batch.isEmpty else { return false }
        while !pending.isEmpty && !exhausted {
            deliver(pending.removeFirst())
        }
        return true
    }

    mutating func deliver(_ c: Collected) {
        let id = c.timer
        let t = timers[id]!
        if t.state == .cancelled {                                 // R2
            note("R2 collected tick of a cancelled timer dropped")
            return
        }
        if t.epoch != c.epoch {                                    // R1: suspended since collected
            if c.manual {
                note("R1 collected manual tick of a suspended timer dropped")
            } else if t.repeating {
                timers[id]!.droppedMissed += 1 + c.missed
                note("R1 collected tick of a suspended repeating timer dropped")
            } else {
                note("R1 collected one-shot suspended: dropped, stays suspended")
            }
            return
        }
        if case .weakOwner = t.form, !ownerAlive(id) {
            // The owner is gone: the timer cancels itself, without a handler call.
            cancelTimer(id)
            reconcile()
            return
        }
        if !t.repeating {
            // A fired one-shot keeps its handler while its handle lives (so it
            // can be rescheduled): it lets go on cancel or release.
            timers[id]!.state = .done
        }
        var missed = c.missed
        if !c.manual {
            if t.droppedMissed > 0 { note("R1 dropped ticks counted in missed") }
            missed += t.droppedMissed
            timers[id]!.droppedMissed = 0
        }
        events.append(.call(timer: id, index: c.index, deadline: c.deadline, firedAt: now, missed: missed,
                            manual: c.manual))
        callCount += 1
        if callCount > callBudget { exhausted = true }
        let callNo = t.calls
        timers[id]!.calls += 1
        if owners[id] != nil { owners[id]!.callRefs += 1 }
        if callNo < t.actions.count {
            let current = CurrentTick(id: id, index: c.index, deadline: c.deadline, manual: c.manual)
            for a in t.actions[callNo] { perform(a, current: current) }
        }
        if owners[id] != nil { owners[id]!.callRefs -= 1 }
        reconcile()
    }
}
