import Synchronization

/// Tasks scheduled under keys and cancelled by key, on the engine: what keyed
/// registries of GCD timers (such as ZHTimer) do. Every task's deadlines are
/// on ``PrecisionClock/Source/monotonic``.
///
/// Unlike ordinary timers, which end with their last reference, a registry task
/// lives until it is cancelled or, for a one-shot, until it has run; the registry
/// then drops it, and with it everything the task captured. Every call is safe
/// from any thread. Tasks run inline on the scheduler thread, on a dispatch
/// queue, or on the main queue (``TimerDelivery``).
///
/// Scheduling under a key that is already live **replaces** the old task: the
/// old one is cancelled (synchronously) before the new one is scheduled. When
/// calls under one key race, the task recorded last wins and every other one is
/// cancelled, or never starts; a key never holds a task that will not run. Once
/// a call under a key has returned, no task that an earlier call under it
/// replaced runs, even while that earlier call is still cancelling it.
public final class TaskRegistry: Sendable {
    /// A task's key: yours, or one the registry made up (`task-1`, `task-2`, …).
    ///
    /// The keys the registry makes up live in a namespace of their own: a key of
    /// yours named `"task-3"` and the made-up key that reads `task-3` are different
    /// keys, so neither can replace or cancel the other's task.
    public struct Key: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// Who named the key: keys compare equal only within one namespace.
        enum Origin: Hashable, Sendable {
            /// A key you named.
            case user
            /// A key the registry made up for a task scheduled without one.
            case generated
        }

        /// The key's text. Two keys are equal when their names are equal and both
        /// are yours, or both were made up by the registry.
        public let name: String
        let origin: Origin
        /// The key named `name`.
        public init(_ name: String) { self.init(name, origin: .user) }
        /// The key named by a string literal: `registry.cancel("poll")`.
        public init(stringLiteral name: String) { self.init(name, origin: .user) }
        init(_ name: String, origin: Origin) {
            self.name = name
            self.origin = origin
        }
        /// The key's ``name``.
        public var description: String { name }
    }

    private struct Entry: Sendable {
        let id: UInt64
        /// The task's node: recorded before it starts, so a one-shot never runs
        /// unrecorded.
        let node: TimerNode
        /// The task's handle, made when `schedule` starts the node; nil until then.
        /// An entry replaced or cancelled before it started never gets one, so it
        /// is never started nor cancelled: a node that was never queued has nothing
        /// to cancel (and a handle would cancel it when released).
        var timer: (any ScheduledTimer)?
        /// The started tasks this entry's `schedule` replaced and has not yet
        /// cancelled (its step 2): they may still run until then, so whatever
        /// takes this entry from the key (a later `schedule`, a `cancel`) cancels
        /// them too. Empty once the entry's own task has started.
        var replaced: [any ScheduledTimer] = []

        /// The started tasks that taking this entry from its key must cancel:
        /// its own, and those it replaced and may not have cancelled yet.
        var pending: [any ScheduledTimer] {
            guard let timer else { return replaced }
            return replaced.isEmpty ? [timer] : replaced + [timer]
        }

        /// Cancels the task (synchronously) if it was started, and those it
        /// replaced if its `schedule` has not yet; call it outside the
        /// registry's lock (it waits for a running handler, which may call in).
        func cancel() {
            for task in pending { task.cancel() }
        }
    }

    private struct State: Sendable {
        var entries: [Key: Entry] = [:]
        var nextID: UInt64 = 1
    }

    private let scheduler: TimerScheduler
    /// Taken on every call, like the scheduler's own lock, and of its kind:
    /// adaptive unless the scheduler asks for realtime priority (see `Locked`).
    private let state: Locked<State>
    /// Which lock `state` is (tests).
    var lockKind: LockKind { state.kind }
    /// Tests only: called by `schedule` on its own thread just after it
    /// recorded the new task (`afterRecord`) and just after it started the new
    /// task's node (`afterStart`), so a test can make other calls happen
    /// exactly there.
    private let afterRecord: (@Sendable (Key) -> Void)?
    private let afterStart: (@Sendable (Key) -> Void)?

    /// A registry whose tasks run on `scheduler` (default the shared one).
    public init(scheduler: TimerScheduler = .shared) {
        self.scheduler = scheduler
        self.afterRecord = nil
        self.afterStart = nil
        state = Locked(State(), kind: scheduler.engine.state.kind)
    }

    /// Tests only: a registry that calls `afterRecord` and `afterStart` in
    /// ``schedule(_:after:repeating:on:leeway:_:)`` right after the new task is
    /// recorded and right after its node has started (outside the registry's lock).
    init(scheduler: TimerScheduler, afterRecord: (@Sendable (Key) -> Void)? = nil,
         afterStart: (@Sendable (Key) -> Void)? = nil) {
        self.scheduler = scheduler
        self.afterRecord = afterRecord
        self.afterStart = afterStart
        state = Locked(State(), kind: scheduler.engine.state.kind)
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
    /// - Precondition: `interval`, if given, is positive (a negative `leeway` is
    ///   zero), as for ``TimerScheduler/schedule(after:clock:leeway:delivery:_:)``
    ///   and ``TimerScheduler/repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``;
    ///   checked before anything changes. A delay or interval past the clock's
    ///   range means "never".
    @discardableResult
    public func schedule(_ key: Key? = nil, after delay: Duration, repeating interval: Duration? = nil,
                         on delivery: TimerDelivery = .inline, leeway: Duration = .zero,
                         _ task: @escaping @Sendable () -> Void) -> Key {
        // Check the arguments before touching the registry.
        let period = interval.map { TimerInterval.period(every: $0, #function) }
        return schedule(key, after: delay, period: period, on: delivery, leeway: leeway, #function, task)
    }

    /// The schedule of a checked period (nil for a one-shot).
    private func schedule(_ key: Key?, after delay: Duration, period: Period?, on delivery: TimerDelivery,
                          leeway: Duration, _ function: StaticString,
                          _ task: @escaping @Sendable () -> Void) -> Key {
        let (id, key) = state.withLock { s -> (UInt64, Key) in
            let id = s.nextID
            s.nextID += 1
            return (id, key ?? Key("task-\(id)", origin: .generated))
        }
        let node: TimerNode
        if let period {
            // On the scheduler's clock (a virtual one in tests), not the kernel's;
            // never before now, so never too far back.
            let now = PrecisionClock.Instant(nanoseconds: scheduler.now(.monotonic))
            node = scheduler.makeRepeatingNode(period: period, first: now + Swift.max(.zero, delay),
                                               clock: .monotonic, leeway: leeway, policy: .skip,
                                               delivery: delivery, .plain { _ in task() })
        } else {
            node = scheduler.makeOneShotNode(after: delay, clock: .monotonic, leeway: leeway, delivery: delivery,
                                             function, .plain { [weak self] _ in
                                                 task()
                                                 self?.remove(key, id: id)  // a one-shot leaves once it has run
                                             })
        }
        // 1. Record the new task before its node starts, so a one-shot can never
        //    run (and try to leave) unrecorded; the entry it replaces leaves now.
        //    Until step 2 has cancelled the tasks that entry stood for, they may
        //    run: the new entry carries them, so that a `schedule` or `cancel`
        //    that takes it from the key meanwhile cancels them too before it
        //    returns.
        let replaced = state.withLock { s -> Entry? in
            var entry = Entry(id: id, node: node)
            let old = s.entries[key]
            if let old { entry.replaced = old.pending }
            s.entries[key] = entry
            return old
        }
        afterRecord?(key)
        // 2. Cancel the replaced task (and those it replaced) before the new one can run.
        replaced?.cancel()
        // 3. Start the node, unless a racing `schedule` under the same key, or a
        //    `cancel`, took the entry meanwhile: the newest record wins, and a task
        //    replaced before it started never starts. Starting under the lock means
        //    no one can take the entry (and cancel the node) between the check and
        //    the start, so this never starts a cancelled node, and never cancels
        //    one that was not started. The engine never calls into the registry
        //    under its own lock, so taking the engine's lock inside ours cannot
        //    deadlock; the handles of the replaced tasks, cancelled in step 2,
        //    are released after unlocking (a handle's deinit cancels).
        let (started, cancelled) = state.withLock { s -> (Bool, [any ScheduledTimer]) in
            guard s.entries[key]?.id == id else { return (false, []) }
            let cancelled = s.entries[key]?.replaced ?? []
            s.entries[key]?.replaced = []
            s.entries[key]?.timer = period == nil ? OneShotTimer(node: node) : RepeatingTimer(node: node)
            scheduler.startTimer(node)
            return (true, cancelled)
        }
        withExtendedLifetime(cancelled) {}
        if started { afterStart?(key) }
        return key
    }

    /// ``schedule(_:after:repeating:on:leeway:_:)`` with a checked interval (one
    /// read at run time): it cannot trap on it.
    @discardableResult
    public func schedule(_ key: Key? = nil, after delay: Duration, repeating interval: TimerInterval,
                         on delivery: TimerDelivery = .inline, leeway: Duration = .zero,
                         _ task: @escaping @Sendable () -> Void) -> Key {
        schedule(key, after: delay, period: interval.period, on: delivery, leeway: leeway, #function, task)
    }

    /// Moves the next run of the task under `key` to `delay` from now, in place:
    /// the same task and timer, no new allocation (the idle timeout pushed back
    /// at each read). A repeating task's grid continues from there with the same
    /// interval. Zero or negative runs as soon as possible; past the clock's
    /// range means "never" (until rescheduled).
    ///
    /// A run whose time has come and that waits for its turn (behind another
    /// task of the same wake-up, or on its delivery queue) is decided for a
    /// repeating task, as for ``RepeatingTimer/setNextDeadline(_:)``: it still
    /// runs, and the run after it moves. A one-shot's run that waits so is
    /// dropped, and the task runs at the new time.
    ///
    /// Returns whether a task was there to move: false for an unknown key, a
    /// cancelled task, and a one-shot that has run (or whose run has begun). A
    /// task whose `schedule` has recorded it and not returned yet (it waits for
    /// the run of the task it replaces to end) is there: its first run moves.
    @discardableResult
    public func reschedule(_ key: Key, after delay: Duration) -> Bool {
        let ns = max(0, delay.saturatingNanoseconds)  // rounded up: a negative delay gives at most 0
        // Under the registry's lock, so a task replaced meanwhile is never the
        // one moved (the engine never calls into the registry under its lock).
        return state.withLock { s -> Bool in
            guard let entry = s.entries[key] else { return false }
            let deadline = entry.node.now.saturatingAdd(ns)
            guard entry.timer != nil else {
                // Recorded and not started yet: its `schedule` is still cancelling
                // the task it replaced, which waits for a run of that task under
                // way. The move is its first run's.
                return entry.node.engine.moveUnstarted(entry.node, to: deadline)
            }
            if entry.node.isRepeating {
                guard !entry.node.read({ $0.state == .cancelled }) else { return false }
                entry.node.engine.moveTick(entry.node, nil, to: deadline)
                return true
            }
            return entry.node.rearm(at: deadline, revivesFired: false)
        }
    }

    /// Cancels the task under `key` (synchronously: when this returns on another
    /// thread, it is not running and will not run again). Returns whether a live
    /// task was there: an unknown key, or one cancelled already, is a no-op that
    /// returns false.
    @discardableResult
    public func cancel(_ key: Key) -> Bool {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: key) }) else { return false }
        entry.cancel()
        return true
    }

    /// Cancels every task (synchronously, as ``cancel(_:)``). With no live task it
    /// does nothing.
    public func cancelAll() {
        let all = state.withLock { s -> [Entry] in
            defer { s.entries.removeAll() }
            return Array(s.entries.values)
        }
        for entry in all { entry.cancel() }
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
    /// (`schedule` records a task before starting it, so the entry of a one-shot
    /// that runs is there unless a newer task or a `cancel` took the key.)
    private func remove(_ key: Key, id: UInt64) {
        let entry = state.withLock { s -> Entry? in
            guard s.entries[key]?.id == id else { return nil }  // replaced or cancelled meanwhile
            return s.entries.removeValue(forKey: key)
        }
        _ = entry  // released here, outside the lock
    }
}
