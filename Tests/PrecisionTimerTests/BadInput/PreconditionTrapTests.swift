import Foundation
import XCTest

/// The preconditions of the public API (the *precondition failure* rows of
/// `PrecisionTimer.docc/BadInput.md`): each bad call, made by the
/// `precondition-probe` executable in a process of its own (a trap ends the
/// process it happens in), must stop that process with a signal and print the
/// message naming the entry point and the bad value. One probe case per
/// trapping entry point; `precondition-probe --list` names them.
///
/// A subprocess rather than catching the trap in-process (CwlPreconditionTesting's
/// Mach-exception / signal handler): it needs no signal handler that a sanitizer
/// also installs, and it sees the process end exactly as a user's would.
final class PreconditionTrapTests: XCTestCase {
    /// The probe, built next to this test bundle (`swift build --build-tests` and
    /// `swift test` build it: the test target depends on it).
    static var probe: URL {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("precondition-probe")
    }

    struct Outcome {
        var reason: Process.TerminationReason
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func run(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = Self.probe
        process.arguments = arguments
        // No symbolicated backtrace from the Swift runtime: it takes seconds per
        // crash, and the message comes before it anyway.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting, so a full pipe cannot stall the probe.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(reason: process.terminationReason, status: process.terminationStatus,
                       stdout: String(decoding: outData, as: UTF8.self),
                       stderr: String(decoding: errData, as: UTF8.self))
    }

    func testEveryPreconditionStopsTheProcessWithItsMessage() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.probe.path) else {
            XCTFail("no precondition-probe at \(Self.probe.path): build it with `swift build --build-tests`")
            return
        }
        let list = try run(["--list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let cases = list.stdout.split(separator: "\n").map { line -> (String, String) in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return (String(parts[0]), String(parts[1]))
        }
        XCTAssertEqual(cases.count, 24, "one case per trapping entry point")
        for (name, message) in cases {
            let outcome = try run([name])
            XCTAssertEqual(outcome.reason, .uncaughtSignal, "\(name): the call did not trap (\(outcome.stdout))")
            // SIGILL (x86-64 ud2) or SIGTRAP (arm64 brk); a sanitizer may turn it into SIGABRT.
            XCTAssertTrue([SIGILL, SIGTRAP, SIGABRT].contains(outcome.status),
                          "\(name): ended by signal \(outcome.status)")
            XCTAssertTrue(outcome.stderr.contains("PrecisionTimer: \(message)"),
                          "\(name): expected \"PrecisionTimer: \(message)\" in:\n\(outcome.stderr)")
            XCTAssertFalse(outcome.stdout.contains("returned"), "\(name): the bad call returned")
        }
    }
}
