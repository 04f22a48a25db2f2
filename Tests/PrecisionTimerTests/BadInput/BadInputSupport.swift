@testable import PrecisionTimer
import XCTest

/// The base of the bad-input tests in this folder (`<Type>BadInputTests.swift`,
/// one class per type under test): every public entry point against its bad
/// inputs, one test per row of the tables in `PrecisionTimer.docc/BadInput.md`
/// (`CONTRIBUTING.md` names them row by row). Timing goes through virtual time, so
/// every assertion is exact; the few tests on real threads only wait, with
/// generous limits, for something to happen at all.
///
/// A base class rather than free functions: the tests keep calling the helpers
/// and the duration lists as members, as they did when they shared one class.
/// `makeScheduler()` (a scheduler on a fresh virtual clock) is TestSupport's.
class BadInputTestCase: XCTestCase {
    typealias Instant = PrecisionClock.Instant

    /// The error a call must throw, by case (the messages are free text).
    enum Expected: CustomStringConvertible {
        case invalidArgument
        case deadlineOutOfRange
        case unsupportedClock(PrecisionClock.Source)

        var description: String {
            switch self {
            case .invalidArgument: return "invalidArgument"
            case .deadlineOutOfRange: return "deadlineOutOfRange"
            case .unsupportedClock(let source): return "unsupportedClock(\(source))"
            }
        }

        func matches(_ error: any Error) -> Bool {
            switch (self, error as? PrecisionTimerError) {
            case (.invalidArgument, .invalidArgument?), (.deadlineOutOfRange, .deadlineOutOfRange?):
                return true
            case (.unsupportedClock(let expected), .unsupportedClock(let got)?):
                return expected == got
            default:
                return false
            }
        }
    }

    func assertThrows<T>(_ expected: Expected, _ expression: @autoclosure () throws -> T, _ message: String = "",
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), message, file: file, line: line) { error in
            XCTAssertTrue(expected.matches(error), "expected \(expected), got \(error) \(message)",
                          file: file, line: line)
        }
    }

    func assertThrowsAsync(_ expected: Expected, _ message: String = "", file: StaticString = #filePath,
                           line: UInt = #line, _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("expected \(expected), nothing was thrown \(message)", file: file, line: line)
        } catch {
            XCTAssertTrue(expected.matches(error), "expected \(expected), got \(error) \(message)",
                          file: file, line: line)
        }
    }

    /// Durations past the `Int64` nanosecond range, including ones whose whole
    /// seconds do not fit in `Int64` (the standard library's `components` traps
    /// on those).
    let overflowing: [Duration] = [.seconds(Int64.max), .nanoseconds(Int64.max), .seconds(1e20),
                                   Duration(attoseconds: .max)]

    /// Hugely negative durations.
    let hugelyNegative: [Duration] = [.seconds(Int64.min), .seconds(-1e20), Duration(attoseconds: .min)]

    /// A timer whose deadline is "never": live, no wake-up planned for it, not
    /// fired at the end of time, and cancellable.
    func assertNeverFiresAndCancels(_ timer: any ScheduledTimer, _ scheduler: TimerScheduler, _ clock: VirtualClock,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(timer.isCancelled, file: file, line: line)
        XCTAssertNil(scheduler.engine.nextWake(), "never is not a wake-up", file: file, line: line)
        let fires = scheduler.statistics.fires
        clock.advance(by: .seconds(Int64.max))
        XCTAssertEqual(scheduler.statistics.fires, fires, file: file, line: line)
        timer.cancel()
        XCTAssertTrue(timer.isCancelled, file: file, line: line)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, file: file, line: line)
    }
}
