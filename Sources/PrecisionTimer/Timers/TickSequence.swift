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
public struct TickSequence: AsyncSequence, Sendable {
    public typealias Element = Tick

    final class Keeper: Sendable {
        let timer: RepeatingTimer
        init(_ timer: RepeatingTimer) { self.timer = timer }
    }

    let stream: AsyncStream<Tick>
    let keeper: Keeper

    /// The timer producing the ticks (to suspend, resume or change it).
    public var timer: RepeatingTimer { keeper.timer }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Tick>.Iterator
        let keeper: Keeper

        public mutating func next() async -> Tick? {
            await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), keeper: keeper)
    }
}

extension TimerScheduler {
    /// A repeating timer's ticks as an `AsyncSequence`; see ``TickSequence``.
    /// Takes the arguments of ``repeating(every:startingAt:clock:leeway:policy:delivery:_:)``.
    /// - Parameter buffering: what to keep while the consumer lags. Default
    ///   ``TickBuffering/latest``.
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
        let timer = try repeating(every: interval, startingAt: start, clock: clock, leeway: leeway,
                                  policy: policy) { tick in
            continuation.yield(tick)
        }
        let keeper = TickSequence.Keeper(timer)
        continuation.onTermination = { [weak keeper] _ in
            keeper?.timer.cancel()
        }
        return TickSequence(stream: stream, keeper: keeper)
    }
}
