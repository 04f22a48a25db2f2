//===----------------------------------------------------------------------===//
// A paced re-arm load for the `scale` scenario's precise timer: a thread of
// its own moves random live one-shots to now + 60 s in place
// (OneShotTimer.reschedule(after:)), a burst of them per millisecond of
// CLOCK_MONOTONIC, about 1 M re-arms/s with bursts of 1,000.
//
// Each burst starts at a random point of its millisecond (drawn before the
// load starts). Bursts at the start of each millisecond would keep a fixed
// phase to a 1 kHz timer's deadlines, so its lateness would depend on where
// its grid happened to fall: inside every burst or inside none. At random
// points, a deadline meets a burst as often as the load keeps the lock busy.
// A burst whose start has passed starts at once; a load that has fallen a
// whole millisecond behind skips to the current one (the achieved rate says
// how far below the aim it stayed).
//===----------------------------------------------------------------------===//
import CMonoClock
import Foundation
import PrecisionTimer
import Synchronization

final class RearmLoad: Sendable {
    static let millisecond: Int64 = 1_000_000

    private let running = Atomic<Bool>(true)
    private let ended = Latch()
    private let rate = Mutex(ScaleFigures.Rate())

    /// Starts the load.
    /// - Parameters:
    ///   - timers: the live one-shots it re-arms.
    ///   - picks: indices into `timers`, drawn at random beforehand (cycled).
    ///   - offsets: where in its millisecond each burst starts, drawn at random
    ///     in 0 ..< 1 ms beforehand (cycled).
    ///   - burst: re-arms per millisecond.
    init(timers: [OneShotTimer], picks: [Int], offsets: [Int64], burst: Int) {
        let thread = Thread { [self] in
            let minute = Duration.seconds(60)
            var count = 0
            var pick = 0
            var slot = monoNow() / Self.millisecond + 1
            let start = monoNow()
            while running.load(ordering: .relaxed) {
                let due = slot * Self.millisecond + offsets[count / burst % offsets.count]
                if monoNow() < due { _ = cmc_sleep_until(cmc_clock_monotonic, due) }
                for _ in 0..<burst {
                    timers[picks[pick]].reschedule(after: minute)
                    pick = pick + 1 == picks.count ? 0 : pick + 1
                }
                count += burst
                slot = Swift.max(slot + 1, monoNow() / Self.millisecond)
            }
            let seconds = Double(monoNow() - start) / 1e9
            rate.withLock { $0 = .init(count: count, seconds: seconds) }
            ended.signal()
        }
        thread.name = "bench-rearm-load"
        thread.start()
    }

    /// Stops the load and returns the re-arms it made over the time it ran.
    func stop() async -> ScaleFigures.Rate {
        running.store(false, ordering: .relaxed)
        await ended.wait()
        return rate.withLock { $0 }
    }

    /// Burst offsets for one load, at random in 0 ..< 1 ms.
    static func randomOffsets() -> [Int64] {
        (0..<4_096).map { _ in Int64.random(in: 0..<millisecond) }
    }
}
