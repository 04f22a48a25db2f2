//===----------------------------------------------------------------------===//
// What the example programs share: their command line (whole numbers, by
// position or as `--name N`), a stop on SIGINT or SIGTERM that lets them print
// a summary, and colour only on a terminal, never with NO_COLOR set.
//===----------------------------------------------------------------------===//
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An example program's command line.
public struct ExampleCommand: Sendable {
    /// The program's name, which its error messages start with.
    public let program: String
    /// The usage text `--help` prints, and a bad argument after its message.
    public let usage: String

    /// A command line named `program` whose `--help` prints `usage`.
    public init(program: String, usage: String) {
        self.program = program
        self.usage = usage
    }

    /// A whole-number argument: its name, its value when not given, its largest value.
    public struct Option: Sendable {
        public let name: String
        public let defaultValue: Int
        public let maximum: Int

        /// An option `--name N`, also given by position; 1 … `maximum`.
        public init(_ name: String, default defaultValue: Int, maximum: Int) {
            self.name = name
            self.defaultValue = defaultValue
            self.maximum = maximum
        }
    }

    /// The values of `options`, in their order, from the process's arguments:
    /// each by position (in the order given) or as `--name N` / `--name=N`.
    /// Prints the usage and exits on `-h` or `--help` (status 0); on a bad
    /// argument prints why and the usage, and exits with status 2.
    public func wholeNumbers(_ options: [Option]) -> [Int] {
        var values = options.map(\.defaultValue)
        var positions = options.indices[...]
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            if argument == "-h" || argument == "--help" {
                print(usage)
                exit(0)
            }
            let index: Int
            let value: String?
            if argument.hasPrefix("--") {
                let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
                guard let found = options.firstIndex(where: { $0.name == parts.first }) else {
                    fail("unknown option '\(argument)'")
                }
                (index, value) = (found, parts.count == 2 ? parts[1] : arguments.popFirst())
            } else if let position = positions.popFirst() {
                (index, value) = (position, argument)
            } else {
                fail("unexpected argument '\(argument)'")
            }
            let option = options[index]
            guard let value, let n = Int(value), n >= 1, n <= option.maximum else {
                fail("\(option.name) must be a whole number from 1 to \(option.maximum)")
            }
            values[index] = n
        }
        return values
    }

    /// Prints `message` and the usage to standard error, and exits with status 2.
    public func fail(_ message: String) -> Never {
        let text = "\(program): \(message)\n\n\(usage)\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        exit(2)
    }
}

/// Calls `handler` (on a Dispatch queue) with the signal when SIGINT or SIGTERM
/// arrives, instead of the process ending. Keep the sources returned.
public func onStopSignal(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
    // Blocked in this thread (the threads of Dispatch and of the timer schedulers
    // block them already), a signal stays pending until its source takes it,
    // instead of ending the process.
    var blocked = sigset_t()
    sigemptyset(&blocked)
    for signal in [SIGINT, SIGTERM] { sigaddset(&blocked, signal) }
    pthread_sigmask(SIG_BLOCK, &blocked, nil)
    return [SIGINT, SIGTERM].map { signal in
        let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
        source.setEventHandler { handler(signal) }
        source.resume()
        return source
    }
}

/// Whether to print colour: standard output is a terminal and NO_COLOR is not
/// set to a non-empty value (https://no-color.org).
public var printsColour: Bool {
    let noColour = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
    return isatty(STDOUT_FILENO) == 1 && !noColour
}
