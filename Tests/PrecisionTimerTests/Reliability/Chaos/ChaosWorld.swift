import CMonoClock
import Foundation
@testable import PrecisionTimer
import Synchronization

@inline(__always) func monoNow() -> Int64 { cmc_now_ns(cmc_clock_monotonic) }

/// The failures found, by kind. Each failure has a key (what failed) and a
/// message (one instance); messages are grouped by key. Hangs count distinct
/// keys (one deadlocked scheduler strands every later operation of the same
/// kind); the other kinds count instances.
final class ChaosReport: Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case hang, early, lost, storm, cpu, leak, violation
    }

    private struct Group: Sendable {
        var count = 0
        var example = ""
    }

    private let entries = Locked<[Kind: (count: Int, groups: [String: Group], order: [String])]>([:])

    func record(_ kind: Kind, _ message: String, key: String? = nil) {
        let key = key ?? message
        entries.withLock { e in
            var entry = e[kind] ?? (0, [:], [])
            entry.count += 1
            if entry.groups[key] == nil {
                entry.order.append(key)
                entry.groups[key] = Group(count: 0, example: message)
            }
            entry.groups[key]?.count += 1
            e[kind] = entry
        }
    }

    func count(_ kind: Kind) -> Int {
        entries.withLock { e in kind == .hang ? e[kind]?.groups.count ?? 0 : e[kind]?.count ?? 0 }
    }

    /// One line per key: its count and its first message.
    func messages(_ kind: Kind) -> [String] {
        entries.withLock { e in
            guard let entry = e[kind] else { return [] }
            let lines = entry.order.prefix(20).map { key -> String in
                let group = entry.groups[key]!
                return group.count > 1 ? "×\(group.count) \(group.example)" : group.example
            }
            return lines + (entry.order.count > 20 ? ["… \(entry.order.count - 20) more kinds"] : [])
        }
    }

    var counts: [Kind: Int] {
        Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, count($0)) })
    }
}

/// Names operations that block too long. Each potentially blocking operation
/// is registered (`begin` / `end`, or `guarded`); one still open `limit` after
/// its start (plus what it is allowed) is a hang, reported once.
final class Watchdog: Sendable {
    struct Operation: Sendable {
        var name: String
        var start: Int64
        var due: Int64
        var reported = false
    }

    let report: ChaosReport
    let limit: Int64
    private let operations = Locked<[Int: Operation]>([:])
    private let nextID = Atomic<Int>(1)

    init(report: ChaosReport, limit: Duration) {
        self.report = report
        self.limit = limit.ns
    }

    func begin(_ name: String, allowing extra: Duration = .zero) -> Int {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let now = monoNow()
        operations.withLock { $0[id] = Operation(name: name, start: now, due: now + extra.ns + limit) }
        return id
    }

    func end(_ id: Int) {
        operations.withLock { _ = $0.removeValue(forKey: id) }
    }

    func guarded<R>(_ name: String, _ body: () throws -> R) rethrows -> R {
        let id = begin(name)
        defer { end(id) }
        return try body()
    }

    func scan() {
        let now = monoNow()
        let stuck = operations.withLock { ops -> [(String, String)] in
            var found: [(String, String)] = []
            for (id, op) in ops where !op.reported && now > op.due {
                ops[id]?.reported = true
                found.append((op.name, "\(op.name): stuck for \(String(format: "%.1f", Double(now - op.start) / 1e9)) s"))
            }
            return found
        }
        for (name, message) in stuck { report.record(.hang, message, key: name) }
    }

    var openOperations: [String] {
        let now = monoNow()
        return operations.withLock { ops in
            ops.values.map { "\($0.name) (\(String(format: "%.1f", Double(now - $0.start) / 1e9)) s)" }
        }
    }
}

/// What every worker shares.
final class ChaosWorld: Sendable {
    let report: ChaosReport
    let watchdog: Watchdog
    let end: Int64
    let stats = Locked<[String: Int]>([:])

    init(report: ChaosReport, watchdog: Watchdog, end: Int64) {
        self.report = report
        self.watchdog = watchdog
        self.end = end
    }

    var running: Bool { monoNow() < end }
    func count(_ key: String, _ n: Int = 1) { stats.withLock { $0[key, default: 0] += n } }
    func maximum(_ key: String, _ n: Int) { stats.withLock { $0[key] = max($0[key] ?? 0, n) } }
}

/// Worker threads, each with its own seeded generator.
final class WorkerSet: Sendable {
    private let names = Locked<Set<String>>([])
    var running: Set<String> { names.withLock { $0 } }

    func start(_ name: String, seed: UInt64, _ body: @escaping @Sendable (inout SplitMix64) -> Void) {
        names.withLock { _ = $0.insert(name) }
        let thread = Thread {
            var rng = SplitMix64(seed: seed)
            body(&rng)
            self.names.withLock { _ = $0.remove(name) }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
