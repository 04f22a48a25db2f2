import Synchronization

/// When a task was first cancelled, as a clock reading: a cancellation handler
/// notes it, and the code the handler guards compares it with other instants
/// (an async sleep's deadline, a timeout's events).
final class CancelReading: Sendable {
    /// The first reading; `Int64.max` while none was noted.
    private let value = Atomic<Int64>(.max)

    /// The first cancel's reading; nil while the task has not been cancelled.
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
