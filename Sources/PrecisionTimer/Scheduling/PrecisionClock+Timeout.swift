import CMonoClock
import Synchronization

/// Which came first in ``PrecisionClock/withTimeout(until:tolerance:operation:)``:
/// the operation's result, or the deadline.
public enum TimeoutResult<Success: Sendable>: Sendable {
    /// The operation finished before the deadline, with this value.
    case completed(Success)
    /// The deadline came first: the operation was cancelled (and awaited), or,
    /// for a deadline already past, never started.
    case timedOut

    /// The operation's value, or nil if the deadline came first.
    public var value: Success? {
        if case .completed(let value) = self { return value }
        return nil
    }

    /// Whether the deadline came first.
    public var didTimeOut: Bool {
        if case .timedOut = self { return true }
        return false
    }
}

extension TimeoutResult: Equatable where Success: Equatable {}
extension TimeoutResult: Hashable where Success: Hashable {}

/// Structured timeouts: an operation raced against a deadline of this clock.
extension PrecisionClock {
    /// Runs `operation` until `deadline` on this clock: if the operation finishes
    /// first its value is returned (`.completed`); if the deadline comes first the
    /// operation is cancelled, and this returns `.timedOut` once the operation has
    /// ended: structured, like tokio's `timeout`; no task outlives the call.
    ///
    /// The operation and a ``sleep(until:tolerance:)`` to the deadline run as
    /// the two child tasks of a task group (the children inherit the task's
    /// executor preference, so in a task that prefers a ``TimerScheduler`` both
    /// run on its thread and the sleep is one of its timers; elsewhere the sleep
    /// is a timer of the shared scheduler);
    /// whichever finishes first wins, and the other is cancelled and awaited.
    /// A cancel of the calling task is the third contender: if it comes before
    /// both, this throws `CancellationError`. Cancellation is cooperative: an
    /// operation that ignores it still has to finish before this returns, and
    /// what it returns or throws after the cancel that ended the race (the
    /// deadline's, or the caller's) is dropped, a value it returns in answer to
    /// the caller's cancel included.
    ///
    /// - Parameters:
    ///   - deadline: an instant of this clock. One already past times out at
    ///     once, without starting the operation. ``Instant/max`` is "never": the
    ///     operation runs to its end.
    ///   - tolerance: the deadline's leeway, as in ``sleep(until:tolerance:)``: the
    ///     timeout may come up to this much late, coalesced with other wake-ups.
    ///   - operation: the work to bound. It is cancelled at the deadline, and
    ///     when the calling task is cancelled.
    /// - Returns: `.completed(value)` or `.timedOut`.
    /// - Throws: what `operation` throws before the deadline and before a cancel
    ///   of the calling task; `CancellationError` when the calling task is
    ///   cancelled before the operation ends and before the deadline (already
    ///   at the call included), whatever the operation then returns or throws;
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on ``Source/monotonicRaw``,
    ///   before the operation starts. A negative tolerance is zero.
    public func withTimeout<Success: Sendable>(
        until deadline: Instant, tolerance: Duration? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try requireSleepable()
        try Task.checkCancellation()
        if now >= deadline { return .timedOut }
        let cancel = CancelReading()
        let first = await withTaskGroup(of: TimeoutRace<Success>.self) { group in
            // Inside the group, so that a cancel is read before the group's
            // children learn of it: an operation that answers the cancel ends
            // after the reading.
            await withTaskCancellationHandler {
                group.addTask {
                    do {
                        let value = try await operation()
                        return .finished(.success(value), at: cmc_now_ns(cmc_clock_monotonic))
                    } catch {
                        return .finished(.failure(error), at: cmc_now_ns(cmc_clock_monotonic))
                    }
                }
                group.addTask {
                    do {
                        try await self.sleep(until: deadline, tolerance: tolerance)
                        return .deadline
                    } catch {
                        return .sleepCancelled  // the caller was cancelled (the clock was checked above)
                    }
                }
                let first = await group.next()
                group.cancelAll()
                while !group.isEmpty { _ = await group.next() }  // the loser ends before we return
                return first
            } onCancel: {
                cancel.note(cmc_now_ns(cmc_clock_monotonic))
            }
        }
        switch first {
        case .finished(let outcome, let endedAt)?:
            // What the operation returned or threw after the caller's cancel
            // is dropped: the cancel came first.
            if let cancelledAt = cancel.reading, cancelledAt <= endedAt { throw CancellationError() }
            return .completed(try outcome.get())
        case .deadline?:
            return .timedOut
        case .sleepCancelled?, nil:
            throw CancellationError()
        }
    }

    /// ``withTimeout(until:tolerance:operation:)`` with the deadline `duration`
    /// from now on this clock (saturating: a huge duration is "never"; zero or
    /// negative times out at once without starting the operation).
    public func withTimeout<Success: Sendable>(
        for duration: Duration, tolerance: Duration? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try await withTimeout(until: now + duration, tolerance: tolerance, operation: operation)
    }
}

/// A child of the timeout's task group: the operation's end (its value or
/// error, and when, on CLOCK_MONOTONIC), the deadline, or the deadline's sleep
/// ended by the caller's cancel.
private enum TimeoutRace<Success: Sendable>: Sendable {
    case finished(Result<Success, any Error>, at: Int64)
    case deadline
    case sleepCancelled
}

/// When the caller of a timeout was first cancelled, on CLOCK_MONOTONIC.
private final class CancelReading: Sendable {
    private let value = Atomic<Int64>(.max)

    /// The first cancel's reading; nil while the caller has not been cancelled.
    var reading: Int64? {
        let reading = value.load(ordering: .acquiring)
        return reading == .max ? nil : reading
    }

    /// Notes a cancel read at `reading`; a later one keeps the first.
    func note(_ reading: Int64) {
        _ = value.compareExchange(expected: .max, desired: Swift.min(reading, .max - 1),
                                  ordering: .acquiringAndReleasing)
    }
}
