import Synchronization

/// Tasks scheduled under keys and cancelled by key: the GCD timer registry of
/// seed 004 (ZHTimer) done on the engine.
///
/// Unlike ordinary timers, which end with their last reference, a registry task
/// lives until it is cancelled or, for a one-shot, until it has run; the registry
/// then drops it, and with it everything the task captured. Every call is safe
/// from any thread. Tasks run inline on the scheduler thread, on a dispatch
/// queue, or on the main queue (``TimerDelivery``).
///
/// Scheduling under a key that is already live **replaces** the old task: the
/// old one is cancelled (synchronously) before the new one is scheduled.
public final class TaskRegistry: Sendable {
    /// A task's key: yours, or one the registry made up (`task-1`, `task-2`, …).
    public struct Key: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The key's text; two keys are equal when their names are.
        public let name: String
        /// The key named `name`.
        public init(_ name: String) { self.name = name }
        /// The key named by a string literal: `registry.cancel("poll")`.
        public init(stringLiteral name: String) { self.name = name }
        /// The key's ``name``.
        public var description: String { name }
    }

    private struct Entry: Sendable {
        let id: UInt64
        let timer: any ScheduledTimer
    }

    private struct State: Sendable {
        var entries: [Key: Entry] = [:]
        var nextID: UInt64 = 1
        /// One-shots that ran before `schedule` had recorded them.
        var ranEarly: Set<UInt64> = []
    }

    private let scheduler: TimerScheduler
    private let state = Locked(State())
    /// Tests only: called by `schedule` on its own thread just after it started
    /// the new task's node, so a test can make other calls happen exactly there.
    private let afterStart: (@Sendable (Key) -> Void)?

    /// A registry whose tasks run on `scheduler` (default the shared one).
    public init(scheduler: TimerScheduler = .shared) {
        self.scheduler = scheduler
        self.afterStart = nil
    }

    /// Tests only: a registry that calls `afterStart` in ``schedule(_:after:repeating:on:leeway:_:)``
    /// right after the new task's node has started (outside the registry's lock).
    init(scheduler: TimerScheduler, afterStart: @escaping @Sendable (Key) -> Void) {
        self.scheduler = scheduler
        self.afterStart = afterStart
    }

    deinit {
        cancelAll()
    }

    /// Schedules `task` after `delay`, then every `interval` if given.
    ///
    /// - Parameters:
    ///   - key: the key; nil makes up a fresh one. A live task under the same key
    ///     is replaced.
    ///   - delay: until the first run; zero or negative runs as soon as possible.
    ///   - interval: the period of a repeating task (drift-free); nil for one run.
    ///   - delivery: where the task runs.
    ///   - leeway: how late each run may be, so wake-ups coalesce.
    ///   - task: the work. The registry keeps it (and what it captures) until the
    ///     task is cancelled or, for a one-shot, has run.
    /// - Returns: the task's key.
    /// - Throws: what ``TimerScheduler/schedule(after:clock:leeway:delivery:_:)`` and
    ///   ``TimerScheduler/repeating(every:startingAt:clock:leeway:policy:delivery:_:)``
    ///   throw (a zero or negative interval, a negative leeway, an overflow). A call
    ///   that throws changes nothing: a live task under `key` keeps running.
    @discardableResult
    public func schedule(_ key: Key? = nil, after delay: Duration, repeating interval: Duration? = nil,
                         on delivery: TimerDelivery = .inline, leeway: Duration = .zero,
                         _ task: @escaping @Sendable () -> Void) throws -> Key {
        let (id, key) = state.withLock { s -> (UInt64, Key) in
            let id = s.nextID
            s.nextID += 1
            return (id, key ?? Key("task-\(id)"))
        }
        // Validate (build) the new task before touching the old one: a call that
        // throws leaves the registry as it was.
        let node: TimerNode
        if let interval {
            // On the scheduler's clock (a virtual one in tests), not the kernel's.
            let now = PrecisionClock.Instant(nanoseconds: scheduler.engine.now(.monotonic))
            node = try scheduler.makeRepeatingNode(every: interval, startingAt: now + Swift.max(.zero, delay),
                                                   clock: .monotonic, leeway: leeway, policy: .skip,
                                                   delivery: delivery, .plain { _ in task() })
        } else {
            node = try scheduler.makeOneShotNode(after: delay, clock: .monotonic, leeway: leeway, delivery: delivery,
                                                 .plain { [weak self] _ in
                                                     task()
                                                     self?.remove(key, id: id)  // a one-shot leaves once it has run
                                                 })
        }
        let replaced = state.withLock { $0.entries.removeValue(forKey: key) }
        replaced?.timer.cancel()
        scheduler.engine.start(node)
        afterStart?(key)
        let timer: any ScheduledTimer = interval == nil ? OneShotTimer(node: node) : RepeatingTimer(node: node)
        let superseded = state.withLock { s -> Entry? in
            if s.ranEarly.remove(id) != nil { return nil }  // already ran and left
            let old = s.entries[key]
            s.entries[key] = Entry(id: id, timer: timer)
            return old
        }
        superseded?.timer.cancel()  // a racing schedule under the same key: the newest wins
        return key
    }

    /// Cancels the task under `key` (synchronously: when this returns on another
    /// thread, it is not running and will not run again). Returns whether a live
    /// task was there: an unknown key, or one cancelled already, is a no-op that
    /// returns false.
    @discardableResult
    public func cancel(_ key: Key) -> Bool {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: key) }) else { return false }
        entry.timer.cancel()
        return true
    }

    /// Cancels every task (synchronously, as ``cancel(_:)``). With no live task it
    /// does nothing.
    public func cancelAll() {
        let all = state.withLock { s -> [Entry] in
            defer { s.entries.removeAll() }
            return Array(s.entries.values)
        }
        for entry in all { entry.timer.cancel() }
    }

    /// Whether a task is live under `key`.
    public func contains(_ key: Key) -> Bool {
        state.withLock { $0.entries[key] != nil }
    }

    /// The number of live tasks.
    public var count: Int {
        state.withLock { $0.entries.count }
    }

    /// Drops the entry of a one-shot that has run, unless it was replaced meanwhile.
    private func remove(_ key: Key, id: UInt64) {
        let entry = state.withLock { s -> Entry? in
            guard let current = s.entries[key] else {
                s.ranEarly.insert(id)  // `schedule` has not recorded it yet
                return nil
            }
            guard current.id == id else { return nil }  // replaced meanwhile
            return s.entries.removeValue(forKey: key)
        }
        _ = entry  // released here, outside the lock
    }
}
