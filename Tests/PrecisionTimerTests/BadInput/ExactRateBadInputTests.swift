@testable import PrecisionTimer
import XCTest

/// Bad input to the exact-rate entry points: a tick count or span out of range
/// for `repeating(ticks:per:)`, `RepeatingTimer.setRate(ticks:per:)` and
/// `FrameLink(frames:per:)`, and a zero or negative interval for a re-aim from
/// a tick. Each is an `invalidArgument`, and a call that throws changes nothing.
final class ExactRateBadInputTests: BadInputTestCase {
    static let badCounts = [0, -1, Int.min, Int(Int64.max / 1_000_000_000) + 1, Int.max]
    static let badSpans: [Duration] = [.zero, .nanoseconds(-1), .seconds(Int64.min)]

    func testRateWithACountOrSpanOutOfRangeThrowsInvalidArgument() {
        let (scheduler, _) = makeScheduler()
        for count in Self.badCounts {
            assertThrows(.invalidArgument, try scheduler.repeating(ticks: count, per: .seconds(1)) { _ in }, "\(count)")
            assertThrows(.invalidArgument, try FrameLink(frames: count, per: .seconds(1), scheduler: scheduler) { _ in },
                         "\(count)")
        }
        for span in Self.badSpans {
            assertThrows(.invalidArgument, try scheduler.repeating(ticks: 60, per: span) { _ in }, "\(span)")
            assertThrows(.invalidArgument, try FrameLink(frames: 60, per: span, scheduler: scheduler) { _ in }, "\(span)")
        }
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    func testTheLargestCountAndASpanPastTheRangeAreAccepted() throws {
        let (scheduler, _) = makeScheduler()
        let fastest = try scheduler.repeating(ticks: Int(Int64.max / 1_000_000_000), per: .seconds(1)) { _ in }
        XCTAssertEqual(fastest.interval, .nanoseconds(1), "a period under 1 ns is 1 ns (a documented clamp)")
        let never = try scheduler.repeating(ticks: 1, per: .seconds(Int64.max)) { _ in }
        XCTAssertEqual(never.nextDeadline, .max, "a period past the range: its ticks never come")
        fastest.cancel()
        never.cancel()
    }

    func testSetRateOutOfRangeThrowsAndChangesNothing() throws {
        let (scheduler, _) = makeScheduler()
        let timer = try scheduler.repeating(ticks: 48, per: .seconds(1)) { _ in }
        let (interval, next) = (timer.interval, timer.nextDeadline)
        for count in Self.badCounts {
            assertThrows(.invalidArgument, try timer.setRate(ticks: count, per: .seconds(1)), "\(count)")
        }
        for span in Self.badSpans {
            assertThrows(.invalidArgument, try timer.setRate(ticks: 48, per: span), "\(span)")
        }
        XCTAssertEqual(timer.interval, interval)
        XCTAssertEqual(timer.nextDeadline, next)
        timer.cancel()
    }

    func testReaimFromATickWithAZeroOrNegativeIntervalThrowsAndChangesNothing() throws {
        let (scheduler, clock) = makeScheduler()
        let outcomes = Recorder<String>()
        let timer = try scheduler.repeating(every: .milliseconds(1)) { tick in
            for interval in [Duration.zero, .nanoseconds(-1), .seconds(Int64.min)] {
                do {
                    try tick.setInterval(interval)
                    outcomes.append("accepted \(interval)")
                } catch let error as PrecisionTimerError {
                    if case .invalidArgument = error { outcomes.append("invalid") } else { outcomes.append("\(error)") }
                } catch {
                    outcomes.append("\(error)")
                }
            }
        }
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(outcomes.all, ["invalid", "invalid", "invalid"])
        XCTAssertEqual(timer.interval, .milliseconds(1))
        XCTAssertEqual(timer.nextDeadline, clock.now() + .milliseconds(1))
        timer.cancel()
    }
}
