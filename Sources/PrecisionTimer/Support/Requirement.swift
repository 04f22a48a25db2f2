/// The check behind every precondition of the public API: an argument of a
/// call that does not throw, which only a programmer's constant can get wrong
/// (a zero interval, a rate of 0 frames per second, a clock the kernel cannot
/// sleep on), stops the process with a message naming the entry point and the
/// bad value, as the standard library, libdispatch, NIO and tokio do. A call
/// that throws reports the same values by throwing instead. See the *Bad input*
/// article.
///
/// `fatalError` rather than `precondition`, so that the message is printed in
/// optimised builds too (`precondition` drops it outside debug builds); like
/// `precondition` it stops the process with a trap.
@inline(__always)
func requirePrecondition(_ condition: Bool, _ function: StaticString, _ message: @autoclosure () -> String,
                         file: StaticString = #fileID, line: UInt = #line) {
    guard _fastPath(condition) else {
        fatalError("PrecisionTimer: \(function): \(message())", file: file, line: line)
    }
}

/// The value `check` returns, or, when it throws, a precondition failure
/// naming `function` with the error's message: how a call that does not throw
/// applies the checks that its throwing forms (and ``TimerInterval``) throw from.
@inline(__always)
func requireValid<T>(_ function: StaticString, file: StaticString = #fileID, line: UInt = #line,
                     _ check: () throws -> T) -> T {
    do {
        return try check()
    } catch PrecisionTimerError.invalidArgument(let message) {
        fatalError("PrecisionTimer: \(function): \(message)", file: file, line: line)
    } catch {
        fatalError("PrecisionTimer: \(function): \(error)", file: file, line: line)
    }
}

extension PrecisionClock {
    /// Stops with a precondition failure naming `function` unless the kernel can
    /// sleep on this clock (it cannot on `monotonicRaw`): the clock of a timer or
    /// a sleeping wait is a programmer's choice, not input.
    func requireSleepablePrecondition(_ function: StaticString) {
        requirePrecondition(source.canSleep, function,
                            "the kernel cannot sleep on \(source); use .monotonic (or .spin for a wait)")
    }
}

extension Duration {
    /// This duration, checked to be zero or more (a timer slack, a hybrid
    /// margin): the calls that take one throw.
    /// - Throws: ``PrecisionTimerError/invalidArgument(_:)`` naming `name`.
    func checkedNotNegative(_ name: String) throws -> Duration {
        guard self >= .zero else {
            throw PrecisionTimerError.invalidArgument("\(name) must not be negative (got \(self))")
        }
        return self
    }

    /// A leeway or tolerance as used: a negative one is zero (a documented
    /// clamp, as Dispatch does; a timer is never early either way).
    var clampedLeeway: Duration { Swift.max(.zero, self) }
}
