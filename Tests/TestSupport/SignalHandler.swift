#if canImport(Glibc)
import Glibc
#endif

/// The action a signal had before ``installSignalHandler(_:restart:_:)``
/// replaced it.
public struct PreviousSignalAction {
    let signal: Int32
    var action: sigaction

    /// Puts the action back.
    /// The corresponding C function is `sigaction(2)`.
    public func restore() {
        var action = action
        sigaction(signal, &action, nil)
    }
}

/// Installs `handler` for `signal`, with an empty mask, and with `SA_RESTART`
/// or without it (then a blocking call the signal interrupts fails with EINTR,
/// or returns it).
///
/// A C signal handler captures nothing: one that counts must count into a
/// global. Returns the action replaced, for ``PreviousSignalAction/restore()``,
/// or nil when the call fails.
/// The corresponding C function is `sigaction(2)`.
@discardableResult
public func installSignalHandler(_ signal: Int32, restart: Bool,
                                 _ handler: @convention(c) (Int32) -> Void) -> PreviousSignalAction? {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = handler
    sigemptyset(&action.sa_mask)
    action.sa_flags = restart ? SA_RESTART : 0
    var previous = sigaction()
    guard sigaction(signal, &action, &previous) == 0 else { return nil }
    return PreviousSignalAction(signal: signal, action: previous)
}
