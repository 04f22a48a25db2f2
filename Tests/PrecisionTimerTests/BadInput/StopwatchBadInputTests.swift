@testable import PrecisionTimer
import XCTest

/// Bad input to ``Stopwatch`` (`Timers/Stopwatch.swift`). `CONTRIBUTING.md` names these tests row
/// by row against the tables of `PrecisionTimer.docc/BadInput.md`; the helpers are in
/// `BadInputSupport.swift`.
final class StopwatchBadInputTests: BadInputTestCase {
    func testStopwatchOnAReadOnlyClockWorks() {
        var watch = Stopwatch(clock: .monotonicRaw)
        let lap = watch.lap()
        XCTAssertGreaterThanOrEqual(lap, .zero)
        XCTAssertGreaterThanOrEqual(watch.elapsed, lap)
        let started = watch.startedAt
        watch.reset()
        watch.reset()
        XCTAssertGreaterThanOrEqual(watch.startedAt, started)
        XCTAssertEqual(watch.lastLapAt, watch.startedAt)
    }
}
