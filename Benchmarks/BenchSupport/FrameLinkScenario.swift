//===----------------------------------------------------------------------===//
// Scenario `framelink`: a 60 fps and a 240 fps FrameLink beside a
// DispatchSourceTimer at the same period, interleaved in rounds on the periodic
// machinery. Frame-time lateness follows the periodic rule (against the earliest
// frame deadline a callback serves); frames swallowed count as dropped.
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import PrecisionTimer

enum FrameLinkScenario {
    static let name = "framelink"
    static let rates = [60, 240]

    /// One frame period rounded to whole nanoseconds: DispatchSourceTimer's
    /// period (FrameLink keeps the exact 1/fps and rounds each frame's time).
    static func period(fps: Int) -> Int64 { (2_000_000_000 / Int64(fps) + 1) / 2 }

    /// State of a FrameLink round; touched only on the engine thread.
    final class FrameGrid: @unchecked Sendable {
        let samples: SampleBuffer
        let done = Latch()
        /// Frame-time only: the link keeps its own grid, and says which frame a callback stands for.
        var grid: TickGrid
        var finished = false
        var earlyByOwnClock = 0

        init(samples: SampleBuffer, period: Int64, frames: Int) {
            self.samples = samples
            grid = TickGrid(start: 0, interval: period, ticks: frames)
        }

        func fired(_ frame: FrameLink.Frame) {
            let now = monoNow()
            guard !finished else { return }
            // The earliest frame this callback serves is `dropped` periods before.
            samples.append(frame.firedAt.nanoseconds - (frame.timestamp.nanoseconds - Int64(frame.dropped) * grid.interval))
            grid.fire(missed: Int(frame.dropped), last: Int(frame.index))
            if now < frame.timestamp.nanoseconds { earlyByOwnClock += 1 }
            if grid.finished {
                finished = true
                done.signal()
            }
        }
    }

    static func contenders(engine: TimerScheduler) -> [PeriodicContender] {
        rates.flatMap { fps -> [PeriodicContender] in
            let period = period(fps: fps)
            return [
                PeriodicContender(name: "FrameLink.\(fps)", cpuScope: .process) { frames, _, samples in
                    let cpu0 = processCPUNanoseconds()
                    let grid = FrameGrid(samples: samples, period: period, frames: frames)
                    let link = FrameLink(preferredFramesPerSecond: fps, scheduler: engine) { grid.fired($0) }
                    await grid.done.wait()
                    link.invalidate()
                    return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: grid.grid.missed,
                                        earlyByOwnClock: grid.earlyByOwnClock)
                },
                PeriodicContender(name: "DispatchSourceTimer.\(fps)", cpuScope: .process) { frames, _, samples in
                    try await Periodic.dispatchSourceTimer(frames, period, samples)
                },
            ]
        }
    }
}
