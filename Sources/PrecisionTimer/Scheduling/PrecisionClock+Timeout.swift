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
    /// Cancellation is cooperative: an operation that ignores it still has to
    /// finish before this returns, and what it then returns or throws is dropped.
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
    /// - Throws: what `operation` throws before the deadline; `CancellationError`
    ///   when the calling task is cancelled (already at the call, or before
    ///   either the deadline or the operation finishes, unless the operation
    ///   then finishes with a value);
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` on ``Source/monotonicRaw``,
    ///   before the operation starts. A negative tolerance is zero.
    public func withTimeout<Success: Sendable>(
        until deadline: Instant, tolerance: Duration? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) async throws -> TimeoutResult<Success> {
        try requireSleepable()
        try Task.checkCancellation()
        if now >= deadline { return .timedOut }
        return try await withThrowingTaskGroup(of: TimeoutRace<Success>.self) { group in
            group.addTask { .finished(try await operation()) }
            group.addTask {
                try await self.sleep(until: deadline, tolerance: tolerance)
                return .deadline
            }
            let first: TimeoutRace<Success>?
            do {
                first = try await group.next()
            } catch {
                // The operation failed first, or the sleep was cancelled (the
                // caller was): end the other child, then report the error.
                group.cancelAll()
                while !group.isEmpty { _ = try? await group.next() }
                throw error
            }
            group.cancelAll()
            while !group.isEmpty { _ = try? await group.next() }  // the loser ends before we return
            switch first {
            case .finished(let value)?: return .completed(value)
            case .deadline?, nil: return .timedOut
            }
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

/// A child of the timeout's task group: the operation's value, or the deadline.
private enum TimeoutRace<Success: Sendable>: Sendable {
    case finished(Success)
    case deadline
}
