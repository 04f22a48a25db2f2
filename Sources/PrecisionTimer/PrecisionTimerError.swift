#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The errors PrecisionTimer throws.
///
/// A call that throws reports every bad argument with one of these: a system
/// call refused (``system(_:operation:)``, with the error number and its
/// `strerror` text), a deadline computed out of range (``deadlineOutOfRange``),
/// a clock the kernel cannot sleep on (``unsupportedClock(_:)``), and any other
/// argument out of range (``invalidArgument(_:)``: an interval, rate, margin,
/// slack or buffer, a realtime priority or CPU the system does not allow).
/// A call that does not throw stops the program instead on what only a
/// programmer's constant can get wrong (a zero interval, a non-finite number of
/// seconds); a value read at run time goes through ``TimerInterval``, whose
/// initializers throw. See the *Bad input* article.
public enum PrecisionTimerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An argument was out of its documented range. The message says which.
    case invalidArgument(String)
    /// The clock cannot do what was asked (the kernel cannot sleep on
    /// `CLOCK_MONOTONIC_RAW`): thrown by the calls that throw (the blocking
    /// waits with a sleeping strategy, the async sleeps, `withTimeout`, the
    /// `startingAt:` factories); the timer factories and ``FrameLink``
    /// initializers that do not throw stop the program on that clock instead.
    case unsupportedClock(PrecisionClock.Source)
    /// The deadline does not fit in the clock's `Int64` nanoseconds (it saturated).
    case deadlineOutOfRange
    /// A system call failed with this error number.
    case system(Errno, operation: String)

    /// A one-line explanation: the kind of error, then the message, the clock or
    /// the failed operation and its `strerror` text.
    public var description: String {
        switch self {
        case .invalidArgument(let message):
            return "invalid argument: \(message)"
        case .unsupportedClock(let source):
            return "unsupported clock: the kernel cannot sleep on \(source)"
        case .deadlineOutOfRange:
            return "deadline out of range: it overflowed the clock's Int64 nanoseconds"
        case .system(let errno, let operation):
            return "\(operation): \(errno)"
        }
    }
}

extension PrecisionTimerError {
    /// An error number from the C library, described by its `strerror` text and
    /// number (in the manner of swift-system's `Errno`).
    ///
    /// Nested in ``PrecisionTimerError`` so that it does not clash with
    /// swift-system's `Errno` in a client that imports both modules.
    public struct Errno: Error, Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The error number (`EPERM`, `EINVAL`, …) as the C library defines it.
        public let rawValue: Int32

        /// The error with number `rawValue`; any value is accepted.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// Operation not permitted.
        public static let notPermitted = Errno(rawValue: EPERM)
        /// Interrupted system call.
        public static let interrupted = Errno(rawValue: EINTR)
        /// Invalid argument.
        public static let invalidArgument = Errno(rawValue: EINVAL)
        /// Operation not supported.
        public static let notSupported = Errno(rawValue: ENOTSUP)
        /// Timed out.
        public static let timedOut = Errno(rawValue: ETIMEDOUT)

        /// The `strerror(3)` text and the number, such as
        /// `Operation not permitted (errno 1)`; `error N` when the C library has no
        /// text for it.
        public var description: String {
            guard let text = strerror(rawValue) else { return "error \(rawValue)" }
            return "\(String(cString: text)) (errno \(rawValue))"
        }
    }
}
