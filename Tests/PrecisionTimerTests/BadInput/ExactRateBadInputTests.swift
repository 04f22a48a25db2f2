@testable import PrecisionTimer
import XCTest

/// Edge input to the exact-rate entry points that is accepted: the largest
/// count, a span past the clock's range. A count or span out of range for
/// `repeating(ticks:per:)`, `RepeatingTimer.setRate(ticks:per:)` and
/// `FrameLink(frames:per:)`, and a zero or negative interval for a re-aim from
/// a tick, are precondition failures: `PreconditionTrapTests`.
final class ExactRateBadInputTests: BadInputTestCase {

    func testTheLargestCountAndASpanPastTheRangeAreAccepted() throws {
        let (scheduler, _) = makeScheduler()
        let fastest = scheduler.repeating(ticks: Int(Int64.max / 1_000_000_000), per: .seconds(1)) { _ in }
        XCTAssertEqual(fastest.interval, .nanoseconds(1), "a period under 1 ns is 1 ns (a documented clamp)")
        let never = scheduler.repeating(ticks: 1, per: .seconds(Int64.max)) { _ in }
        XCTAssertEqual(never.nextDeadline, .max, "a period past the range: its ticks never come")
        fastest.cancel()
        never.cancel()
    }
}
