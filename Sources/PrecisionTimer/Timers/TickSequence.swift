import DequeModule

/// How a ``TickSequence`` buffers ticks its consumer has not taken yet.
public enum TickBuffering: Sendable, Hashable {
    /// Keep only the newest `n` ticks; older ones are dropped. A consumer that
    /// falls behind sees the newest state, and loses no count: the ticks the
    /// buffer drops are added to the ``Tick/missed`` of the tick it delivers
    /// next (a dropped tick counts as one, plus the ticks it reported missed;
    /// a dropped ``Tick/isManual`` fire, not being a grid tick, counts only
    /// those).
    case newest(Int)
    /// Keep every tick: nothing is dropped, memory grows while the consumer lags.
    case all

    /// Only the newest tick.
    public static var latest: TickBuffering { .newest(1) }
}

/// The ticks of a repeating timer as an `AsyncSequence`.
///
/// The timer lives as long as the sequence or one of its iterators; it is
/// cancelled when they are released or the consuming task is cancelled.
/// Cancelling the timer (``timer``'s `cancel()`, or ``Tick/cancelTimer()`` on a
/// tick received) ends the sequence: iteration returns the ticks still buffered,
/// then nil.
public struct TickSequence: AsyncSequence, Sendable {
    /// Each element is one firing of the timer.
    public typealias Element = Tick

    final class Keeper: Sendable {
        let timer: RepeatingTimer
        init(_ timer: RepeatingTimer) { self.timer = timer }
    }

    let channel: TickChannel
    let keeper: Keeper

    /// The timer producing the ticks (to suspend, resume or change it).
    public var timer: RepeatingTimer { keeper.timer }

    /// Iterates the ticks; it keeps the timer alive while it exists.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: TickChannel
        let keeper: Keeper

        /// The next buffered tick, waiting for one if none is buffered; nil once
        /// the consuming task is cancelled (which cancels the timer and ends the
        /// sequence), or once the timer is cancelled and the buffered ticks are
        /// consumed.
        public mutating func next() async -> Tick? {
            await channel.next(cancelling: keeper.timer.node)
        }
    }

    /// An iterator over the ticks, buffered as the sequence's ``TickBuffering`` says.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: channel, keeper: keeper)
    }
}

extension TimerScheduler {
    /// A repeating timer's ticks as an `AsyncSequence`; see ``TickSequence``.
    /// Takes the arguments of ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``.
    ///
    /// - Parameters:
    ///   - interval: the period; must be positive.
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///     Clamped to 1 ns under `interval`.
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - buffering: what to keep while the consumer lags. Default
    ///     ``TickBuffering/latest``.
    /// - Returns: the sequence; its timer is running already.
    /// - Precondition: ``TickBuffering/newest(_:)`` keeps at least one tick; and as
    ///   ``repeating(every:clock:leeway:policy:delivery:recordsLateness:_:)-(Duration,_,_,_,_,_,_)``.
    public func ticks(
        every interval: Duration, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, buffering: TickBuffering = .latest
    ) -> TickSequence {
        let period = TimerInterval.period(every: interval, #function)
        clock.requireSleepablePrecondition(#function)
        return makeTicks(period: period, first: defaultStart(period: period, clock: clock), clock: clock,
                         leeway: leeway, policy: policy, limit: Self.bufferLimit(buffering, #function))
    }

    /// ``ticks(every:clock:leeway:policy:buffering:)-(Duration,_,_,_,_)`` on a grid anchored at
    /// `start`: tick 0 is due at `start`.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` for a start more than
    ///   2^62 ns before now, as ``repeating(every:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``,
    ///   and every bad argument as that form does
    ///   (``PrecisionTimerError/invalidArgument(_:)`` also for a buffer of no tick).
    public func ticks(
        every interval: Duration, startingAt start: PrecisionClock.Instant,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        buffering: TickBuffering = .latest
    ) throws -> TickSequence {
        let period = try TimerInterval.period(every: interval)
        try clock.requireSleepable()
        let limit = try Self.checkedBufferLimit(buffering)
        return makeTicks(period: period, first: try checkedStart(start, clock: clock), clock: clock,
                         leeway: leeway, policy: policy, limit: limit)
    }

    /// ``ticks(every:clock:leeway:policy:buffering:)`` with a checked interval:
    /// it cannot trap on it.
    /// - Precondition: as ``ticks(every:clock:leeway:policy:buffering:)``, but for
    ///   the interval.
    public func ticks(
        every interval: TimerInterval, clock: PrecisionClock = .monotonic, leeway: Duration = .zero,
        policy: MissedTickPolicy = .skip, buffering: TickBuffering = .latest
    ) -> TickSequence {
        clock.requireSleepablePrecondition(#function)
        return makeTicks(period: interval.period, first: defaultStart(period: interval.period, clock: clock),
                         clock: clock, leeway: leeway, policy: policy, limit: Self.bufferLimit(buffering, #function))
    }

    /// The buffer's capacity; ``TickBuffering/newest(_:)`` of no tick is a
    /// precondition failure naming `function`.
    static func bufferLimit(_ buffering: TickBuffering, _ function: StaticString) -> Int {
        requireValid(function) { try checkedBufferLimit(buffering) }
    }

    /// The buffer's capacity.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for
    ///   ``TickBuffering/newest(_:)`` of no tick.
    static func checkedBufferLimit(_ buffering: TickBuffering) throws -> Int {
        switch buffering {
        case .newest(let n):
            guard n > 0 else {
                throw PrecisionTimerError.invalidArgument("buffering must keep at least one tick (got \(n))")
            }
            return n
        case .all:
            return .max
        }
    }

    /// The sequence of a validated grid.
    private func makeTicks(period: Period, first: PrecisionClock.Instant, clock: PrecisionClock, leeway: Duration,
                           policy: MissedTickPolicy, limit: Int) -> TickSequence {
        let channel = TickChannel(limit: limit)
        let end = TickChannelEnd(channel)
        let timer = startRepeating(period: period, first: first, clock: clock, leeway: leeway, policy: policy,
                                   delivery: .inline, .plain { [end] tick in end.channel.send(tick) })
        return TickSequence(channel: channel, keeper: TickSequence.Keeper(timer))
    }
}

/// The buffer between a tick sequence's timer (on the scheduler's thread) and
/// its consumers: `AsyncStream`'s, except that the ticks it drops are counted
/// in the `missed` of the tick delivered next (a stream cannot edit an element
/// it has buffered).
///
/// A dropped tick's count goes into the new oldest buffered tick, which is the
/// one a consumer takes next and the one that follows the dropped tick on the
/// grid. Consumers waiting means the buffer is empty: a tick goes straight to
/// the first of them.
final class TickChannel: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Tick?, Never>
    }

    private struct State {
        var buffer = Deque<Tick>()
        var waiters = Deque<Waiter>()
        var lastWaiterID: UInt64 = 0
        /// No tick comes any more: the timer is gone, or a consumer was cancelled.
        var finished = false
    }

    /// How many ticks the buffer keeps (`.max`: all).
    private let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Hands `tick` to the first waiting consumer, or buffers it (dropping the
    /// oldest beyond the limit). Ignored once finished.
    func send(_ tick: Tick) {
        let waiter = state.withLock { s -> Waiter? in
            guard !s.finished else { return nil }
            if let waiter = s.waiters.popFirst() { return waiter }
            s.buffer.append(tick)
            if s.buffer.count > limit {
                let dropped = s.buffer.removeFirst()
                let count = dropped.isManual ? dropped.missed : Tick.saturatingSum(dropped.missed, 1)
                s.buffer[s.buffer.startIndex] = s.buffer[s.buffer.startIndex].addingMissed(count)
            }
            return nil
        }
        waiter?.continuation.resume(returning: tick)
    }

    /// The timer is gone: waiting consumers get nil; the buffered ticks are
    /// still delivered, then nil.
    func finish() {
        let waiters = state.withLock { s -> Deque<Waiter> in
            s.finished = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next tick, or nil once finished and empty, or once the calling task
    /// is cancelled: that ends the channel for every consumer, drops what is
    /// buffered, and cancels `node` (the sequence's timer) without waiting for a
    /// running handler. The cancellation handler runs inside the runtime's
    /// `swift_task_cancel`, holding the task's status lock, while the handler may
    /// be resuming this very task from `send`, which needs that lock: a cancel
    /// that waited would deadlock.
    func next(cancelling node: TimerNode) async -> Tick? {
        if Task.isCancelled {
            cancel(node)
            return nil
        }
        // Fast path: a buffered tick or the end, without a continuation.
        let first = state.withLock { s -> Result<Tick?, Never>? in
            if let tick = s.buffer.popFirst() { return .success(tick) }
            if s.finished { return .success(nil) }
            return nil
        }
        if case .success(let tick) = first { return tick }
        let id = state.withLock { s in
            s.lastWaiterID &+= 1
            return s.lastWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Tick?, Never>) in
                // Registered under the lock, or answered at once: a cancellation
                // that ran before this (the flag is set before the handler runs)
                // is seen here; one after it finds the waiter and resumes it.
                // Whoever removes the waiter resumes it, exactly once.
                let answer = state.withLock { s -> Tick?? in
                    if Task.isCancelled { return .some(nil) }
                    if let tick = s.buffer.popFirst() { return .some(tick) }
                    if s.finished { return .some(nil) }
                    s.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            cancel(node)
        }
    }

    /// A consumer was cancelled: every waiter gets nil, the buffer is dropped,
    /// and the timer is cancelled without waiting.
    private func cancel(_ node: TimerNode) {
        let waiters = state.withLock { s -> Deque<Waiter> in
            s.finished = true
            s.buffer.removeAll()
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
        node.cancel(waitingForHandler: false)
    }
}

extension Tick {
    /// This tick with `count` more ticks reported missed.
    func addingMissed(_ count: Int) -> Tick {
        var tick = self
        tick.missed = Self.saturatingSum(missed, count)
        return tick
    }

    /// `a + b`, saturating at `Int.max` (counts of missed ticks never trap).
    static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}

/// Finishes a tick channel when released. The timer's handler holds the only
/// reference, and the engine releases the handler once the timer is cancelled
/// (by `cancel()`, a tick's `cancelTimer()` or release): the sequence then ends
/// instead of leaving its consumer waiting for ticks that will never come.
private final class TickChannelEnd: Sendable {
    let channel: TickChannel

    init(_ channel: TickChannel) {
        self.channel = channel
    }

    deinit {
        channel.finish()
    }
}
