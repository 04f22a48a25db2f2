/// How a ``TickSequence`` buffers ticks its consumer has not taken yet.
public enum TickBuffering: Sendable, Hashable {
    /// Keep only the newest `n` ticks; older ones are dropped (a consumer that
    /// falls behind sees the newest state; ``Tick/missed`` does not count drops
    /// made by the buffer).
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

    let stream: AsyncStream<Tick>
    let keeper: Keeper

    /// The timer producing the ticks (to suspend, resume or change it).
    public var timer: RepeatingTimer { keeper.timer }

    /// Iterates the ticks; it keeps the timer alive while it exists.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Tick>.Iterator
        let keeper: Keeper

        /// The next buffered tick, waiting for one if none is buffered; nil once
        /// the consuming task is cancelled (which cancels the timer), or once the
        /// timer is cancelled and the buffered ticks are consumed.
        public mutating func next() async -> Tick? {
            await base.next()
        }
    }

    /// An iterator over the ticks, buffered as the sequence's ``TickBuffering`` says.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), keeper: keeper)
    }
}

extension TimerScheduler {
    /// A repeating timer's ticks as an `AsyncSequence`; see ``TickSequence``.
    /// Takes the arguments of ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``.
    ///
    /// - Parameters:
    ///   - interval: the period; must be positive.
    ///   - start: tick 0's deadline. Default: one interval from now.
    ///   - clock: the kernel clock the grid lives on. Default monotonic.
    ///   - leeway: how late each tick may fire so wake-ups coalesce; never early.
    ///     Clamped to `interval`.
    ///   - policy: what happens to ticks that fall due while the timer cannot fire.
    ///   - buffering: what to keep while the consumer lags. Default
    ///     ``TickBuffering/latest``.
    /// - Returns: the sequence; its timer is running already.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` for ``TickBuffering/newest(_:)``
    ///   with fewer than one tick, and what ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``
    ///   throws.
    public func ticks(
        every interval: Duration, startingAt start: PrecisionClock.Instant? = nil,
        clock: PrecisionClock = .monotonic, leeway: Duration = .zero, policy: MissedTickPolicy = .skip,
        buffering: TickBuffering = .latest
    ) throws -> TickSequence {
        let policyForStream: AsyncStream<Tick>.Continuation.BufferingPolicy
        switch buffering {
        case .newest(let n):
            guard n > 0 else {
                throw PrecisionTimerError.invalidArgument("buffering must keep at least one tick (got \(n))")
            }
            policyForStream = .bufferingNewest(n)
        case .all:
            policyForStream = .unbounded
        }
        let (stream, continuation) = AsyncStream<Tick>.makeStream(bufferingPolicy: policyForStream)
        let end = TickStreamEnd(continuation)
        let timer = try repeating(every: interval, startingAt: start, clock: clock, leeway: leeway,
                                  policy: policy) { [end] tick in
            end.continuation.yield(tick)
        }
        let keeper = TickSequence.Keeper(timer)
        // The runtime may call this inside the consuming task's cancellation
        // handler, holding that task's status lock: a cancel that waited for a
        // running handler would deadlock with a handler resuming that very task
        // from `yield`. It cancels without waiting; the synchronous cancel is
        // the keeper's, when the sequence and its iterators are released.
        continuation.onTermination = { [weak node = timer.node] _ in
            if let node { node.engine.cancel(node, waitForHandler: false) }
        }
        return TickSequence(stream: stream, keeper: keeper)
    }
}

/// Finishes a tick stream when released. The timer's handler holds the only
/// reference, and the engine releases the handler once the timer is cancelled
/// (by `cancel()`, a tick's `cancelTimer()` or release): the sequence then ends
/// instead of leaving its consumer waiting for ticks that will never come.
private final class TickStreamEnd: Sendable {
    let continuation: AsyncStream<Tick>.Continuation

    init(_ continuation: AsyncStream<Tick>.Continuation) {
        self.continuation = continuation
    }

    deinit {
        continuation.finish()
    }
}
