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
    /// is a timer of the shared scheduler). Three events race: the operation's
    /// end, the deadline, and a cancel of the calling task. The first of them,
    /// by when each came on this clock (not by which child the group hands
    /// over first), decides: the operation's value or error; `.timedOut`; or
    /// `CancellationError`. The other child is cancelled and awaited either
    /// way. An operation that ends on its own after the deadline but within
    /// `tolerance` may still complete; one that ends after a cancel of the
    /// caller that came after the deadline times out. Cancellation is
    /// cooperative: an operation that ignores it still has to finish before
    /// this returns, and what it returns or throws after the event that
    /// decided (the deadline, or the caller's cancel) is dropped, a value it
    /// returns in answer to the caller's cancel included.
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
    ///   cancelled before the operation ends and before the deadline, whatever
    ///   the operation then returns or throws, or was already cancelled at the
    ///   call (whatever the deadline: the operation does not start);
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
                        return .finished(.success(value), at: self.now.nanoseconds)
                    } catch {
                        return .finished(.failure(error), at: self.now.nanoseconds)
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
                cancel.note(self.now.nanoseconds)
            }
        }
        // The group hands over whichever child finished first; which event came
        // first is decided by when each came on this clock. A child may finish
        // late: the deadline's waits for a thread, or for an operation that
        // holds the scheduler's thread past the deadline.
        let window = deadline.nanoseconds.saturatingAdd(Swift.max(0, (tolerance ?? .zero).saturatingNanoseconds))
        switch first {
        case .finished(let outcome, let endedAt)?:
            if let cancelledAt = cancel.reading, cancelledAt <= endedAt {
                // The operation ended after the caller's cancel: the cancel
                // decides, unless the deadline came before it.
                if cancelledAt < deadline.nanoseconds { throw CancellationError() }
                return .timedOut
            }
            // The deadline came first, and its tolerance was over.
            if endedAt >= window { return .timedOut }
            return .completed(try outcome.get())
        case .deadline?:
            return .timedOut
        case .sleepCancelled?, nil:
            // The deadline came before the cancel, though its timer had not fired.
            if let cancelledAt = cancel.reading, cancelledAt >= deadline.nanoseconds { return .timedOut }
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
/// error, and when, on the timeout's clock), the deadline, or the deadline's
/// sleep ended by the caller's cancel.
private enum TimeoutRace<Success: Sendable>: Sendable {
    case finished(Result<Success, any Error>, at: Int64)
    case deadline
    case sleepCancelled
}

/// When the caller of a timeout was first cancelled, on the timeout's clock.
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
