// The vocabulary ModelTests speaks: the operations a sequence is made of, the
// events both the engine and the reference model record, and how each reads
// in a failure report.

enum MPolicy: String, Sendable { case skip, burst, delay }

/// A deadline argument: an offset from the virtual now when the op runs, or Instant.max.
enum MDeadline: Equatable, Sendable {
    case offset(Int64)
    case max
}

/// An interval argument: nanoseconds; a Duration of attoseconds (fractions of
/// a nanosecond kept); a rate (`count` ticks per `span` attoseconds: the
/// factory `repeating(ticks:per:)`, or `setRate` as a new interval); or one too
/// large to fit in Int64 ns.
enum MInterval: Equatable, Sendable {
    case ns(Int64)
    case attos(Int128)
    case rate(Int, per: Int128)
    case tooLarge

    /// The too-large interval: 2^40 s (1.1e21 ns).
    static let tooLargeAttos: Int128 = Int128(1 << 40) * 1_000_000_000_000_000_000

    var isRate: Bool { if case .rate = self { return true } else { return false } }
}

enum MForm: Equatable, Sendable {
    /// The harness holds the handle; the handler captures nothing of note.
    case plain
    /// `repeating(..., owner:)`: the owner stores the timer, the harness holds the
    /// owner (and, with alsoHeld, the timer handle too).
    case weakOwner(alsoHeld: Bool)
    /// The handler captures its owner strongly and the owner stores the timer (a
    /// retain cycle broken when the handler is released): the harness holds the owner.
    case cycleOwner
}

enum MKind: Equatable, Sendable {
    case oneShot(at: MDeadline, leeway: Int64)
    case repeating(every: MInterval, start: MDeadline?, leeway: Int64, policy: MPolicy)
}

enum MAction: Equatable, Sendable {
    case busy(Int64)
    case cancel(Int)
    case suspend(Int)
    case resume(Int)
    case fire(Int)
    case setInterval(Int, MInterval)
    case setNextDeadline(Int, MDeadline)
    case releaseHandle(Int)
    case dropOwner(Int)
    /// `tick.cancelTimer()` from the handler (own timer).
    case cancelFromTick
    /// `tick.setInterval(_:)` from the handler (G2; never a rate).
    case tickSetInterval(MInterval)
    /// `tick.setNextDeadline(_:)` from the handler (G2).
    case tickSetNextDeadline(MDeadline)
    /// `VirtualClock.advance(by:)` from the handler: a nested advance (N1).
    case advanceClock(Int64)
}

struct MTimerSpec: Equatable, Sendable {
    var id: Int
    var kind: MKind
    var form: MForm
    /// actions[n]: what the handler does on its n-th call (0-based).
    var actions: [[MAction]]
}

enum MOp: Equatable, Sendable {
    case create(MTimerSpec)
    case advance(Int64)
    case act(MAction)
    case nop
}

/// What both sides record, compared one by one.
enum MEvent: Equatable, Sendable, CustomStringConvertible {
    case call(timer: Int, index: Int64, deadline: Int64, firedAt: Int64, missed: Int64, manual: Bool)
    /// An op or handler action threw (location: "op3" or "T1#0.1").
    case threw(String)
    case end
    case hang
    /// The engine made thousands of calls more than the model (the harness then
    /// cancelled everything).
    case storm

    var description: String {
        switch self {
        case let .call(t, i, d, f, m, man):
            return "T\(t) k=\(i) dl=\(fmtT(d)) at=\(fmtT(f)) missed=\(m)\(man ? " MANUAL" : "")"
        case .threw(let loc): return "threw at \(loc)"
        case .end: return "end"
        case .hang: return "HANG (engine thread stuck)"
        case .storm: return "STORM (2000+ calls more than the model; harness cancelled all)"
        }
    }
}

/// Virtual instants relative to the clock's start (1 s), in ms with ns precision.
func fmtT(_ t: Int64) -> String {
    if t == .max { return "MAX" }
    if t == .min { return "MIN" }
    return fmtD(t - ReferenceModel.origin)
}

/// A Duration of `a` attoseconds, exactly: "20833333.333333333ns".
func fmtAttos(_ a: Int128) -> String {
    let ns = a / MPeriod.attosPerNs, frac = a % MPeriod.attosPerNs
    if frac == 0 { return fmtD(Int64(clamping: ns)) }
    let digits = String(frac)
    return "\(ns).\(String(repeating: "0", count: 9 - digits.count) + digits)ns"
}

func fmtD(_ d: Int64) -> String {
    if d == .max { return "MAX" }
    if d % 1_000_000 == 0 { return "\(d / 1_000_000)ms" }
    return "\(Double(d) / 1e6)ms"
}

extension MDeadline: CustomStringConvertible {
    var description: String {
        switch self {
        case .offset(let o): return (o >= 0 ? "now+" : "now") + fmtD(o)
        case .max: return "Instant.max"
        }
    }
}

extension MInterval: CustomStringConvertible {
    var description: String {
        switch self {
        case .ns(let n): return fmtD(n)
        case .attos(let a): return fmtAttos(a)
        case let .rate(c, span): return "\(c) ticks per \(fmtAttos(span))"
        case .tooLarge: return "TOO-LARGE"
        }
    }
}

extension MAction: CustomStringConvertible {
    var description: String {
        switch self {
        case .busy(let d): return "busy \(fmtD(d))"
        case .cancel(let t): return "cancel T\(t)"
        case .suspend(let t): return "suspend T\(t)"
        case .resume(let t): return "resume T\(t)"
        case .fire(let t): return "fire T\(t)"
        case let .setInterval(t, .rate(c, span)): return "T\(t).setRate(ticks: \(c), per: \(fmtAttos(span)))"
        case .setInterval(let t, let i): return "T\(t).setInterval(\(i))"
        case .setNextDeadline(let t, let d): return "T\(t).setNextDeadline(\(d))"
        case .releaseHandle(let t): return "release T\(t)"
        case .dropOwner(let t): return "drop owner of T\(t)"
        case .cancelFromTick: return "tick.cancelTimer()"
        case .tickSetInterval(let i): return "tick.setInterval(\(i))"
        case .tickSetNextDeadline(let d): return "tick.setNextDeadline(\(d))"
        case .advanceClock(let d): return "clock.advance(by: \(fmtD(d)))"
        }
    }
}

extension MOp: CustomStringConvertible {
    var description: String {
        switch self {
        case .nop: return "-"
        case .advance(let d): return "advance \(fmtD(d))"
        case .act(let a): return a.description
        case .create(let s):
            var text: String
            switch s.kind {
            case let .oneShot(at, lw): text = "T\(s.id)=oneShot(at: \(at), leeway: \(fmtD(lw))"
            case let .repeating(.rate(c, span), start, lw, p):
                text = "T\(s.id)=repeating(ticks: \(c), per: \(fmtAttos(span)), start: \(start.map { "\($0)" } ?? "default"), "
                    + "leeway: \(fmtD(lw)), .\(p.rawValue)"
            case let .repeating(iv, start, lw, p):
                text = "T\(s.id)=repeating(every: \(iv), start: \(start.map { "\($0)" } ?? "default"), "
                    + "leeway: \(fmtD(lw)), .\(p.rawValue)"
            }
            switch s.form {
            case .plain: text += ")"
            case .weakOwner(let held): text += ", weak owner\(held ? ", handle also held" : ""))"
            case .cycleOwner: text += ", owner captured strongly + owns the timer)"
            }
            let acts = s.actions.enumerated().filter { !$0.element.isEmpty }
                .map { "#\($0.offset): \($0.element.map(\.description).joined(separator: ", "))" }
            if !acts.isEmpty { text += " {" + acts.joined(separator: "; ") + "}" }
            return text
        }
    }
}
