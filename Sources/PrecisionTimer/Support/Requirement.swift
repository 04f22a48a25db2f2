/// The check behind every precondition of the public API: an argument that only
/// a programmer's constant can get wrong (a zero interval, a negative leeway, a
/// rate of 0 frames per second, a clock the kernel cannot sleep on) stops the
/// process with a message naming the entry point and the bad value, as the
/// standard library, libdispatch, NIO and tokio do. See the *Bad input* article.
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
    /// Stops with a precondition failure naming `function` when this leeway
    /// (slack, margin) is negative.
    func requireNotNegative(_ name: String, _ function: StaticString) {
        requirePrecondition(self >= .zero, function, "\(name) must not be negative (got \(self))")
    }
}
