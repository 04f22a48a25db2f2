@testable import PrecisionTimer
import XCTest

/// Grids true to the rate asked for: a `Duration` period keeps its
/// attoseconds, a rate given as ticks per span keeps its fraction, and each
/// deadline is the exact product rounded once to the nearest nanosecond.
/// Large indices are reached through a start far in the past, under virtual time.
final class ExactRateTests: XCTestCase {
    /// `numerator / denominator` rounded to the nearest integer (halves up).
    func rounded(_ numerator: Int128, _ denominator: Int128) -> Int64 {
        Int64((2 * numerator + denominator) / (2 * denominator))
    }

    /// Makes a skip timer whose tick `k` is the latest due now, fires it, and
    /// returns that tick and the timer's start.
    func fireTick(_ k: Int64, exactOffset: (Int64) -> Int64,
                  make: (TimerScheduler, PrecisionClock.Instant, @escaping @Sendable (Tick) -> Void) throws
                      -> RepeatingTimer) throws -> (tick: Tick, start: PrecisionClock.Instant) {
        let clock = VirtualClock(monotonic: 1 << 62)
        let scheduler = TimerScheduler(clock: clock)
        let start = clock.now() - .nanoseconds(exactOffset(k))
        let ticks = Recorder<Tick>()
        let timer = try make(scheduler, start) { ticks.append($0) }
        clock.advance(by: .nanoseconds(1))  // the rounding may put tick k half a nanosecond late
        timer.cancel()
        let tick = try XCTUnwrap(ticks.all.first, "tick \(k) did not fire")
        XCTAssertEqual(ticks.count, 1)
        return (tick, start)
    }

    func testADurationPeriodOf1Over48SecondStaysWithin1NanosecondOfTheTrueGridUpToTick1e9() throws {
        let period = Duration.seconds(1) / 48  // 20,833,333.333… ns, exact to the attosecond
        for k: Int64 in [1, 2, 47, 48, 239, 240, 1_000, 1_000_000, 123_456_789, 999_999_999, 1_000_000_000] {
            let (tick, start) = try fireTick(k, exactOffset: { rounded(Int128($0) * 1_000_000_000, 48) }) {
                try $0.repeating(every: period, startingAt: $1, $2)
            }
            XCTAssertEqual(Int64(tick.index), k)
            // |deadline − (start + k/48 s)| < 1 ns, in integers: |48·d − k·10⁹| < 48.
            let d = Int128(tick.deadline.nanoseconds - start.nanoseconds)
            XCTAssertLessThan(abs(48 * d - Int128(k) * 1_000_000_000), 48, "tick \(k) is ≥ 1 ns off the true grid")
        }
    }

    func testARateOf2880Per60SecondsIsExactToTheNanosecond() throws {
        // 24 PPQN at 120 BPM; the largest index reachable from a start 2^62 ns
        // back is about 2.2 × 10^11.
        let exact = { (k: Int64) in self.rounded(Int128(k) * 60_000_000_000, 2_880) }
        for k: Int64 in [1, 2, 3, 2_879, 2_880, 1_000_000, 1_000_000_000, 100_000_000_000, 220_000_000_000] {
            let (tick, start) = try fireTick(k, exactOffset: exact) {
                try $0.repeating(ticks: 2_880, per: .seconds(60), startingAt: $1, $2)
            }
            XCTAssertEqual(Int64(tick.index), k)
            XCTAssertEqual(tick.deadline.nanoseconds - start.nanoseconds, exact(k), "tick \(k)")
        }
    }

    func testA59Point94FpsFrameLinkIsExactToTheNanosecond() throws {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        let frames = Recorder<FrameLink.Frame>()
        let link = FrameLink(frames: 60_000, per: .seconds(1_001), scheduler: scheduler) { frames.append($0) }
        XCTAssertEqual(link.preferredFramesPerSecond, 60, "59.94 reported rounded")
        let exact = { (k: Int64) in self.rounded(Int128(k) * 1_001_000_000_000, 60_000) }
        let start = clock.now() + .nanoseconds(exact(1))
        clock.advance(by: .seconds(10))
        let all = frames.all
        XCTAssertEqual(all.count, 599, "frames 0 … 598 in 10 s at 59.94 fps")
        for frame in all {
            XCTAssertEqual(frame.timestamp.nanoseconds - start.nanoseconds, exact(Int64(frame.index)))
            XCTAssertEqual(frame.targetTimestamp.nanoseconds - start.nanoseconds, exact(Int64(frame.index + 1)))
        }
        XCTAssertEqual(all.first?.duration, Duration(attoseconds: 16_683_333_333_333_333))
        link.invalidate()
        // Far indices: the same rounding on the timer the link runs on.
        for k: Int64 in [1_000_000_000, 100_000_000_000, 270_000_000_000] {
            let (tick, start) = try fireTick(k, exactOffset: exact) {
                try $0.repeating(ticks: 60_000, per: .seconds(1_001), startingAt: $1, $2)
            }
            XCTAssertEqual(Int64(tick.index), k)
            XCTAssertEqual(tick.deadline.nanoseconds - start.nanoseconds, exact(k), "tick \(k)")
        }
    }

    func testExactOffsetsUpToTick1e12() throws {
        // Past 2.2 × 10^11 ticks the deadlines of these rates leave the clock's
        // Int64 range; the arithmetic itself stays exact to 10^12 and beyond.
        let rates: [(count: Int, span: Duration, exact: (Int64) -> Int128)] = [
            (2_880, .seconds(60), { Int128($0) * 60_000_000_000 }),
            (60_000, .seconds(1_001), { Int128($0) * 1_001_000_000_000 }),
        ]
        for rate in rates {
            let period = TimerInterval.period(ticks: rate.count, per: rate.span, #function)
            for k: Int64 in [1, 7, 1_000_000_000_000, 999_999_999_999, 1_000_000_000_001] {
                let n = rate.exact(k)
                let d = Int128(rate.count)
                XCTAssertEqual(period.exactOffset(ofTicks: k), (2 * n + d) / (2 * d), "\(rate.count) per \(rate.span), tick \(k)")
            }
        }
    }

    func testTheMIDIClockChangesTempoFromInsideTick239AndTick240IsOnTheNewGrid() throws {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        let ticks = Recorder<Tick>()
        // 24 PPQN at 120 BPM: 2,880 pulses a minute. At pulse 239, 140 BPM: 3,360.
        let timer = scheduler.repeating(ticks: 2_880, per: .seconds(60)) { tick in
            ticks.append(tick)
            if tick.index == 239 { tick.setInterval(.seconds(60) / 3_360) }
        }
        let start = clock.now() + .nanoseconds(rounded(60_000_000_000, 2_880))
        clock.advance(by: .seconds(6))
        let all = ticks.all
        for tick in all where tick.index <= 239 {
            XCTAssertEqual(tick.deadline.nanoseconds - start.nanoseconds, rounded(Int128(tick.index) * 60_000_000_000, 2_880))
        }
        let t239 = try XCTUnwrap(all.first { $0.index == 239 }).deadline
        for tick in all where tick.index > 239 {
            // One new pulse (60 s / 3,360) after tick 239 per index, rounded once.
            let j = Int128(tick.index - 239)
            XCTAssertEqual(tick.deadline.nanoseconds - t239.nanoseconds, rounded(j * 60_000_000_000, 3_360),
                           "tick \(tick.index)")
        }
        XCTAssertEqual(all.first { $0.index == 240 }?.deadline, t239 + .nanoseconds(17_857_143))
        XCTAssertTrue(all.allSatisfy { $0.missed == 0 })
        XCTAssertEqual(all.map(\.index), Array(0..<all.count))
        timer.cancel()
    }

    func testARepeatingTimersSetIntervalFromOutsideKeepsThePendingTickAndStaysExact() throws {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        let ticks = Recorder<Tick>()
        let timer = scheduler.repeating(every: .milliseconds(1)) { ticks.append($0) }
        clock.advance(by: .milliseconds(3))
        let pending = try XCTUnwrap(timer.nextDeadline)
        timer.setInterval(.seconds(1) / 3)
        clock.advance(by: .seconds(2))
        let after = ticks.all.filter { $0.deadline >= pending }
        for (j, tick) in after.enumerated() {
            XCTAssertEqual(tick.deadline.nanoseconds - pending.nanoseconds, rounded(Int128(j) * 1_000_000_000, 3))
        }
        XCTAssertGreaterThanOrEqual(after.count, 6)
        timer.setRate(ticks: 3, per: .seconds(1))
        XCTAssertEqual(timer.interval, Duration(attoseconds: 333_333_333_333_333_333))
        timer.cancel()
    }
}
