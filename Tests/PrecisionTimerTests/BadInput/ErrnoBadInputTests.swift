@testable import PrecisionTimer
import XCTest

/// Bad input to ``Errno`` and ``PrecisionTimerError`` (`PrecisionTimerError.swift`).
/// `CONTRIBUTING.md` names these tests row by row against the tables of
/// `PrecisionTimer.docc/BadInput.md`; the helpers are in `BadInputSupport.swift`.
final class ErrnoBadInputTests: BadInputTestCase {
    func testErrnoOfAnyNumberHasADescription() {
        XCTAssertEqual(PrecisionTimerError.Errno(rawValue: 0).description, "Success (errno 0)")
        for number: Int32 in [-1, 99_999, .min, .max] {
            let text = PrecisionTimerError.Errno(rawValue: number).description
            XCTAssertTrue(text.hasSuffix("(errno \(number))"), text)
            XCTAssertGreaterThan(text.count, "(errno \(number))".count, text)
        }
        let error = PrecisionTimerError.system(PrecisionTimerError.Errno(rawValue: -1), operation: "prctl")
        XCTAssertTrue(error.description.hasPrefix("prctl: "), error.description)
    }
}
