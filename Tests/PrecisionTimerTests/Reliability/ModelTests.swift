@testable import PrecisionTimer
import Foundation
import Synchronization
import TestSupport
import XCTest

/// An object that stores its own timer (for the owner forms of ModelTests).
final class ModelOwner: @unchecked Sendable {
    // @unchecked: only touched on the one thread that runs a sequence.
    var timer: (any ScheduledTimer)?
}

/// A weak reference to a timer, so the harness can cancel leftovers at the end.
struct WeakTimer {
    weak var timer: (any ScheduledTimer)?
}

/// Progress of a sequence on its worker thread, watched for hangs.
final class ModelProgress: Sendable {
    let steps = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
    let events = LockedValue<[MEvent]>([])
    /// The engine under test, so the watchdog can see a thread stuck in cancel().
    let engine = LockedValue<TimerEngine?>(nil)

    /// True while someone waits in `cancel()` for a handler call to end: with a
    /// single thread driving the scheduler, nothing can ever end that wait.
    var waitsInCancel: Bool {
        guard let engine = engine.withLock({ $0 }) else { return false }
        return engine.state.withLock { $0.cancelWaiters } > 0
    }
}

/// Runs one op list on a real `TimerScheduler(clock: VirtualClock())`, recording
/// every handler call as an `MEvent`. All of it runs on one thread.
final class EngineHarness: @unchecked Sendable {
    // @unchecked: handlers run on the thread that advances the clock, which is
    // the thread that runs the ops; nothing here is shared with another thread
    // except `progress` (atomics and a lock).
    let clock = VirtualClock()
    let scheduler: TimerScheduler
    let progress: ModelProgress
    var handles: [Int: any ScheduledTimer] = [:]
    var owners: [Int: ModelOwner] = [:]
    var weakTimers: [WeakTimer] = []
    var specs: [Int: MTimerSpec] = [:]
    var calls: [Int: Int] = [:]
    var totalCalls = 0
    /// Past this many handler calls the engine is storming (the model's budget is
    /// far lower): the harness then cancels every timer so the sequence ends.
    let stormLimit: Int
    var stormed = false

    init(stormLimit: Int, progress: ModelProgress) {
        self.progress = progress
        self.stormLimit = stormLimit
        scheduler = TimerScheduler(clock: clock)
        let engine = scheduler.engine
        progress.engine.withLock { $0 = engine }
    }

    func record(_ event: MEvent) {
        progress.events.withLock { $0.append(event) }
        progress.steps.add(1, ordering: .relaxed)
    }

    func run(_ ops: [MOp]) {
        for (i, op) in ops.enumerated() {
            progress.steps.add(1, ordering: .relaxed)
            switch op {
            case .nop: break
            case .create(let spec): create(spec, location: "op\(i)")
            case .advance(let d): clock.advance(by: .nanoseconds(d))
            case .act(let a): perform(a, current: nil, tick: nil, location: "op\(i)")
            }
        }
        record(.end)
        tearDown()
    }

    /// Cancels whatever is left (breaking the owner cycles) and lets go of all.
    func tearDown() {
        for w in weakTimers {
            if let t = w.timer { t.cancel() }
        }
        let h = handles
        let o = owners
        handles = [:]
        owners = [:]
        withExtendedLifetime((h, o)) {}
    }

    func instant(_ d: MDeadline) -> PrecisionClock.Instant {
        switch d {
        case .max: return .max
        case .offset(let o): return .init(nanoseconds: mSatAdd(clock.now().nanoseconds, o))
        }
    }

    /// An interval as a Duration (a rate is passed as ticks per span instead).
    func duration(_ i: MInterval) -> Duration {
        switch i {
        case .ns(let n): return .nanoseconds(n)
        case .attos(let a): return Duration(attoseconds: a)
        case .rate: preconditionFailure("a rate is not one Duration")
        case .tooLarge:  // 1.1e21 ns: does not fit in Int64
            precondition(Duration.seconds(Int64(1) << 40).attoseconds == MInterval.tooLargeAttos)
            return .seconds(Int64(1) << 40)
        }
    }

    /// `repeating(every:)`, or `repeating(ticks:per:)` for a rate.
    func repeating(_ iv: MInterval, _ start: MDeadline?, _ lw: Int64, _ p: MPolicy,
                   _ handler: @escaping @Sendable (Tick) -> Void) throws -> RepeatingTimer {
        switch (iv, start) {
        case let (.rate(count, span), start?):
            return try scheduler.repeating(ticks: count, per: Duration(attoseconds: span), startingAt: instant(start),
                                           leeway: .nanoseconds(lw), policy: policy(p), handler)
        case let (.rate(count, span), nil):
            return scheduler.repeating(ticks: count, per: Duration(attoseconds: span), leeway: .nanoseconds(lw),
                                       policy: policy(p), handler)
        case let (_, start?):
            return try scheduler.repeating(every: duration(iv), startingAt: instant(start),
                                           leeway: .nanoseconds(lw), policy: policy(p), handler)
        case (_, nil):
            return scheduler.repeating(every: duration(iv), leeway: .nanoseconds(lw), policy: policy(p), handler)
        }
    }

    func create(_ spec: MTimerSpec, location: String) {
        specs[spec.id] = spec
        let id = spec.id
        do {
            let timer: any ScheduledTimer
            var owner: ModelOwner?
            switch (spec.kind, spec.form) {
            case let (.oneShot(at, lw), .cycleOwner):
                let o = ModelOwner()
                owner = o
                timer = scheduler.schedule(at: instant(at), leeway: .nanoseconds(lw)) { tick in
                    withExtendedLifetime(o) {}
                    self.onCall(id, tick)
                }
            case let (.oneShot(at, lw), _):
                timer = scheduler.schedule(at: instant(at), leeway: .nanoseconds(lw)) { tick in
                    self.onCall(id, tick)
                }
            case let (.repeating(iv, start, lw, p), .weakOwner):
                let o = ModelOwner()
                owner = o
                if case let .rate(count, span) = iv {
                    // The weak-owner form on an exact rate (as FrameLink makes it).
                    let period = TimerInterval.period(ticks: count, per: Duration(attoseconds: span), "ModelTests")
                    let first = try start.map { try scheduler.checkedStart(instant($0), clock: .monotonic) }
                        ?? scheduler.defaultStart(period: period, clock: .monotonic)
                    timer = scheduler.repeating(
                        period: period, first: first, clock: .monotonic, leeway: .nanoseconds(lw),
                        policy: policy(p), delivery: .inline, owner: o) { _, tick in
                        self.onCall(id, tick)
                    }
                } else if let start {
                    timer = try scheduler.repeating(every: duration(iv), startingAt: instant(start),
                                                    leeway: .nanoseconds(lw), policy: policy(p), owner: o) { _, tick in
                        self.onCall(id, tick)
                    }
                } else {
                    timer = scheduler.repeating(every: duration(iv), leeway: .nanoseconds(lw), policy: policy(p),
                                                owner: o) { _, tick in
                        self.onCall(id, tick)
                    }
                }
            case let (.repeating(iv, start, lw, p), .cycleOwner):
                let o = ModelOwner()
                owner = o
                timer = try repeating(iv, start, lw, p) { tick in
                    withExtendedLifetime(o) {}
                    self.onCall(id, tick)
                }
            case let (.repeating(iv, start, lw, p), .plain):
                timer = try repeating(iv, start, lw, p) { tick in
                    self.onCall(id, tick)
                }
            }
            weakTimers.append(WeakTimer(timer: timer))
            switch spec.form {
            case .plain:
                handles[id] = timer
            case .weakOwner(let held):
                owner!.timer = timer
                owners[id] = owner
                if held { handles[id] = timer }
            case .cycleOwner:
                owner!.timer = timer
                owners[id] = owner
            }
        } catch {
            record(.threw(location))
        }
    }

    func policy(_ p: MPolicy) -> MissedTickPolicy {
        switch p {
        case .skip: return .skip
        case .burst: return .burst
        case .delay: return .delay
        }
    }

    func handle(_ id: Int) -> (any ScheduledTimer)? {
        handles[id] ?? owners[id]?.timer
    }

    func onCall(_ id: Int, _ tick: Tick) {
        totalCalls += 1
        if totalCalls > stormLimit {
            if !stormed {
                stormed = true
                record(.storm)
                for w in weakTimers { w.timer?.cancel() }
            }
            return
        }
        record(.call(timer: id, index: Int64(tick.index), deadline: tick.deadline.nanoseconds,
                     firedAt: tick.firedAt.nanoseconds, missed: Int64(tick.missed), manual: tick.isManual))
        let n = calls[id, default: 0]
        calls[id] = n + 1
        guard let spec = specs[id], n < spec.actions.count else { return }
        for (j, a) in spec.actions[n].enumerated() {
            perform(a, current: id, tick: tick, location: "T\(id)#\(n).\(j)")
        }
    }

    func perform(_ a: MAction, current: Int?, tick: Tick?, location: String) {
        switch a {
        case .busy(let d): clock.busy(for: .nanoseconds(d))
        case .advanceClock(let d): clock.advance(by: .nanoseconds(d))
        case .cancel(let id): handle(id)?.cancel()
        case .suspend(let id): handle(id)?.suspend()
        case .resume(let id): handle(id)?.resume()
        case .fire(let id): handle(id)?.fire()
        case let .setInterval(id, .rate(count, span)):
            guard let r = handle(id) as? RepeatingTimer else { return }
            r.setRate(ticks: count, per: Duration(attoseconds: span))
        case .setInterval(let id, let iv):
            guard let r = handle(id) as? RepeatingTimer else { return }
            r.setInterval(duration(iv))
        case .setNextDeadline(let id, let d):
            if let o = handle(id) as? OneShotTimer {
                o.reschedule(at: instant(d))
                return
            }
            guard let r = handle(id) as? RepeatingTimer else { return }
            do { try r.setNextDeadline(instant(d)) } catch { record(.threw(location)) }
        case .releaseHandle(let id):
            let released = handles.removeValue(forKey: id)
            withExtendedLifetime(released) {}
        case .dropOwner(let id):
            let released = owners.removeValue(forKey: id)
            withExtendedLifetime(released) {}
        case .cancelFromTick:
            tick?.cancelTimer()
        case .tickSetInterval(let iv):
            guard let tick else { return }
            tick.setInterval(duration(iv))
        case .tickSetNextDeadline(let d):
            guard let tick else { return }
            do { try tick.setNextDeadline(instant(d)) } catch { record(.threw(location)) }
        }
    }
}

/// One sequence's outcome.
struct ModelOutcome {
    var model: [MEvent]
    var engine: [MEvent]
    /// Index of the first differing event, nil when they agree.
    var firstDivergence: Int?
    /// The model's rule notes (see ReferenceModel.notes).
    var notes: [(at: Int, rule: String)] = []

    /// The rule a divergence concerns, from where the model applied the rules:
    /// a drop or missed-count note right at the divergence, else R4/R5 notes before it.
    var rule: String {
        guard let i = firstDivergence else { return "-" }
        if i < engine.count, engine[i] == .hang { return "R3 handle release must not hang" }
        if i < engine.count, case .threw = engine[i] { return "R5 no error (engine threw)" }
        if let n = notes.last(where: { $0.at == i && ($0.rule.hasPrefix("R1") || $0.rule.hasPrefix("R2")) }) {
            return n.rule
        }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("R4") }) { return n.rule }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("R5") }) { return n.rule }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("R1") }) { return n.rule + " (earlier)" }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("G2") }) { return n.rule }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("G1") }) { return n.rule }
        if let n = notes.last(where: { $0.at <= i && $0.rule.hasPrefix("P1") }) { return n.rule }
        return "no rule note: check the model against the docs"
    }

    var signature: String {
        guard let i = firstDivergence else { return "agree" }
        let m = i < model.count ? model[i] : nil
        let e = i < engine.count ? engine[i] : nil
        switch (m, e) {
        case (_, .hang?): return "engine hangs"
        case (_, .storm?): return "engine storms"
        case (_, .threw?): return "engine throws"
        case (nil, _): return "engine makes an extra call"
        case (_, nil): return "engine stops early"
        case (.end?, _): return "engine makes an extra call"
        case (_, .end?): return "engine misses a call"
        case let (.call(mt, mi, md, mf, mm, mman)?, .call(et, ei, ed, ef, em, eman)?):
            if mt != et || mman != eman { return "engine calls another timer / kind of tick" }
            var fields: [String] = []
            if mi != ei { fields.append("index") }
            if md != ed { fields.append("deadline") }
            if mf != ef { fields.append("firedAt") }
            if mm != em { fields.append("missed") }
            return "engine's tick differs in " + fields.joined(separator: "+")
        default: return "other"
        }
    }
}

final class ModelTests: XCTestCase {
    static let defaultSequences = 10_000
    static let defaultBaseSeed: UInt64 = 0x5EED_2024_0001
    /// No progress on the engine side for this long is a hang (a livelock);
    /// a thread stuck in cancel() is recognised at once.
    static let hangTimeout: Double = 10

    /// The op list of sequence `seed`: a generated one whose model run stays
    /// within the call budget (a later attempt of the same seed otherwise).
    static func sequence(seed: UInt64) -> [MOp] {
        var s = seed
        for _ in 0..<16 {
            let ops = SequenceGenerator.generate(seed: s)
            if !ReferenceModel.run(ops, callBudget: 1_500).exhausted { return ops }
            s = ModelRandom.sequenceSeed(base: s, index: 1)
        }
        return [.nop]
    }

    /// Runs `ops` on the engine, on a thread of its own (a hang leaves that
    /// thread blocked and reports `.hang`).
    static func runEngine(_ ops: [MOp], stormLimit: Int) -> [MEvent] {
        let progress = ModelProgress()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let harness = EngineHarness(stormLimit: stormLimit, progress: progress)
            harness.run(ops)
            progress.finished.store(true, ordering: .releasing)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        var lastSteps = -1
        var stalledSince = Date()
        while done.wait(timeout: .now() + .milliseconds(5)) == .timedOut {
            let steps = progress.steps.load(ordering: .relaxed)
            if steps != lastSteps {
                lastSteps = steps
                stalledSince = Date()
            } else if progress.waitsInCancel || Date().timeIntervalSince(stalledSince) > hangTimeout {
                var events = progress.events.withLock { $0 }
                events.append(.hang)
                return events
            }
        }
        return progress.events.withLock { $0 }
    }

    static func compare(_ ops: [MOp]) -> ModelOutcome {
        let run = ReferenceModel.runWithNotes(ops)
        let model = run.events
        let engine = runEngine(ops, stormLimit: model.count + 2_000)
        var first: Int?
        for i in 0..<Swift.max(model.count, engine.count) {
            let m = i < model.count ? model[i] : nil
            let e = i < engine.count ? engine[i] : nil
            if m != e {
                first = i
                break
            }
        }
        return ModelOutcome(model: model, engine: engine, firstDivergence: first, notes: run.notes)
    }

    /// Greedy shrinking: drop ops and handler actions while the first
    /// divergence keeps its signature.
    static func shrink(_ ops: [MOp], signature: String, budget: Int = 150) -> [MOp] {
        var best = ops
        var trials = 0
        func stillFails(_ candidate: [MOp]) -> Bool {
            trials += 1
            let o = compare(candidate)
            return o.signature + " — " + o.rule == signature
        }
        var progress = true
        while progress && trials < budget {
            progress = false
            for i in best.indices.reversed() where trials < budget {
                guard best[i] != .nop else { continue }
                var c = best
                c[i] = .nop
                if stillFails(c) {
                    best = c
                    progress = true
                    continue
                }
                guard case .create(var spec) = best[i] else { continue }
                for n in spec.actions.indices {
                    for j in spec.actions[n].indices.reversed() where trials < budget {
                        var s = spec
                        s.actions[n].remove(at: j)
                        c = best
                        c[i] = .create(s)
                        if stillFails(c) {
                            best = c
                            spec = s
                            progress = true
                        }
                    }
                }
            }
        }
        return best.filter { $0 != .nop }
    }

    /// Which of the model's rules the (shrunk) ops touch: a hint for triage.
    static func rulesHint(_ ops: [MOp], signature: String) -> String {
        var rules: Set<String> = []
        var actions: [MAction] = []
        for op in ops {
            switch op {
            case .create(let s):
                actions += s.actions.flatMap { $0 }
                if case .oneShot(.max, _) = s.kind { rules.insert("R5") }
                if case .repeating(let iv, let start, _, _) = s.kind {
                    if iv == .tooLarge || start == .max { rules.insert("R5") }
                    if MPeriod(iv).den != 1 { rules.insert("G1") }
                    if case .offset(let o)? = start, o <= -1_000_000_000 { rules.insert("R4?") }
                }
                if s.form == .cycleOwner { rules.insert("R3?") }
            case .act(let a): actions.append(a)
            default: break
            }
        }
        for a in actions {
            switch a {
            case .suspend: rules.insert("R1?")
            case .setInterval(_, .tooLarge), .setNextDeadline(_, .max): rules.insert("R5")
            case .setInterval(_, let iv):
                rules.insert("R4?")
                if MPeriod(iv).den != 1 { rules.insert("G1") }
            case .tickSetInterval, .tickSetNextDeadline: rules.insert("G2")
            case .cancel, .releaseHandle, .dropOwner, .cancelFromTick: rules.insert("R2?")
            default: break
            }
        }
        if signature == "engine hangs" { return "R3" }
        if signature == "engine storms" { return "R4" }
        if signature == "engine throws" { return "R5" }
        return rules.sorted().joined(separator: ",")
    }

    static func report(seed: UInt64, index: Int?, ops: [MOp], outcome: ModelOutcome, shrunk: [MOp]?) -> String {
        var text = "DIVERGENCE seed \(seed)" + (index.map { " (sequence \($0))" } ?? "")
            + ": \(outcome.signature) — rule: \(outcome.rule) [ops touch: \(rulesHint(shrunk ?? ops, signature: outcome.signature))]\n"
        text += "  ops:\n" + ops.enumerated().map { "    \($0.offset): \($0.element)" }.joined(separator: "\n") + "\n"
        if let i = outcome.firstDivergence {
            let ctx = Swift.max(0, i - 3)
            text += "  agreed calls before it (last \(i - ctx) of \(i)):\n"
            for e in outcome.model[ctx..<i] { text += "    \(e)\n" }
            text += "  model expected: \(i < outcome.model.count ? "\(outcome.model[i])" : "nothing")\n"
            text += "  engine did:     \(i < outcome.engine.count ? "\(outcome.engine[i])" : "nothing")\n"
        }
        if let shrunk {
            let o = compare(shrunk)
            text += "  minimal reproduction:\n" + shrunk.map { "    \($0)" }.joined(separator: "\n") + "\n"
            if let i = o.firstDivergence {
                text += "    model: " + o.model.prefix(i + 1).map(\.description).joined(separator: " | ") + "\n"
                text += "    engine: " + o.engine.prefix(i + 1).map(\.description).joined(separator: " | ") + "\n"
            }
        }
        return text
    }

    /// Whether `op` makes a timer whose handler advances the clock (N1).
    static func advancesInAHandler(_ op: MOp) -> Bool {
        guard case .create(let spec) = op else { return false }
        return spec.actions.joined().contains { if case .advanceClock = $0 { true } else { false } }
    }

    func testEngineAgreesWithTheReferenceModel() throws {
        let env = ProcessInfo.processInfo.environment
        if let replay = env["PRECISIONTIMER_MODEL_SEED"].flatMap({ UInt64($0) }) {
            let ops = Self.sequence(seed: replay)
            let outcome = Self.compare(ops)
            print("replay seed \(replay): ops:\n" + ops.map { "  \($0)" }.joined(separator: "\n"))
            print("model events:\n" + outcome.model.map { "  \($0)" }.joined(separator: "\n"))
            print("engine events:\n" + outcome.engine.map { "  \($0)" }.joined(separator: "\n"))
            let d = outcome.firstDivergence == nil ? 0 : 1
            print("model: 1 sequences, \(d) divergences (seed \(replay))")
            if d > 0 {
                let shrunk = Self.shrink(ops, signature: outcome.signature + " — " + outcome.rule)
                let text = Self.report(seed: replay, index: nil, ops: ops, outcome: outcome, shrunk: shrunk)
                print(text)
                XCTFail(text)
            }
            return
        }
        let count = env["PRECISIONTIMER_MODEL_SEQUENCES"].flatMap { Int($0) } ?? Self.defaultSequences
        let base = env["PRECISIONTIMER_MODEL_BASE_SEED"].flatMap { UInt64($0) } ?? Self.defaultBaseSeed
        var divergences = 0
        var rearmed = 0  // sequences that re-armed a one-shot (P1)
        var ruleKinds: [String: Int] = [:]  // sequences that applied each P1 / N1 case
        var nested = 0  // sequences whose handlers advanced the clock (N1)
        var bySignature: [String: (count: Int, seed: UInt64, index: Int, ops: [MOp], outcome: ModelOutcome)] = [:]
        var order: [String] = []
        let started = Date()
        for i in 0..<count {
            let seed = ModelRandom.sequenceSeed(base: base, index: i)
            let ops = Self.sequence(seed: seed)
            let outcome = Self.compare(ops)
            if outcome.notes.contains(where: { $0.rule.hasPrefix("P1") }) { rearmed += 1 }
            for kind in Set(outcome.notes.map(\.rule).filter { $0.hasPrefix("P1") || $0.hasPrefix("N1") }) {
                ruleKinds[kind, default: 0] += 1
            }
            if ops.contains(where: Self.advancesInAHandler) { nested += 1 }
            guard outcome.firstDivergence != nil else { continue }
            divergences += 1
            let sig = outcome.signature + " — " + outcome.rule
            if var entry = bySignature[sig] {
                entry.count += 1
                // Keep the shortest example of each kind.
                if ops.count < entry.ops.count { (entry.seed, entry.index, entry.ops, entry.outcome) = (seed, i, ops, outcome) }
                bySignature[sig] = entry
            } else {
                bySignature[sig] = (1, seed, i, ops, outcome)
                order.append(sig)
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        var details: [String] = []
        for sig in order.prefix(12) {
            let e = bySignature[sig]!
            let shrunk = Self.shrink(e.ops, signature: sig, budget: 120)
            details.append("\(e.count) × \(sig)\n"
                + Self.report(seed: e.seed, index: e.index, ops: e.ops, outcome: e.outcome, shrunk: shrunk))
        }
        for d in details { print(d) }
        print(String(format: "(%d sequences ran in %.1f s; %d re-armed a one-shot; %d advanced the clock in a handler)",
                     count, elapsed, rearmed, nested)
              + " " + ruleKinds.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        if count >= 1_000 {
            XCTAssertGreaterThan(rearmed, count / 100, "the sequences hardly re-arm a one-shot: P1 is not exercised")
            XCTAssertGreaterThan(ruleKinds["N1 nested advance delivers the collected ticks first", default: 0], count / 1_000,
                                 "the sequences hardly advance the clock over collected ticks: N1 is not exercised")
        }
        print("model: \(count) sequences, \(divergences) divergences (seed \(base))")
        if divergences > 0 {
            XCTFail("\(divergences) divergences from the reference model; first kinds:\n"
                + details.prefix(3).joined(separator: "\n"))
        }
    }
}
