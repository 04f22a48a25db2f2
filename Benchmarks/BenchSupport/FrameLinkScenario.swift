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

    /// One FrameLink round; touched only on the engine thread. Its grid is for
    /// frame time only: the link keeps its own, and says which frame a callback
    /// stands for.
    static func frameRound(samples: SampleBuffer, period: Int64, frames: Int) -> GridRound<FrameLink.Frame> {
        GridRound(samples: samples, grid: TickGrid(start: 0, interval: period, ticks: frames)) { round, frame, now in
            // The bench's own reading (not the link's `firedAt`), against the
            // earliest frame this callback serves: `dropped` periods before.
            round.samples.append(now - (frame.timestamp.nanoseconds - Int64(frame.dropped) * round.grid.interval))
            round.grid.fire(missed: Int(frame.dropped), last: Int(frame.index))
            if now < frame.timestamp.nanoseconds { round.earlyByOwnClock += 1 }
        }
    }

    static func contenders(engine: TimerScheduler) -> [PeriodicContender] {
        rates.flatMap { fps -> [PeriodicContender] in
            let period = period(fps: fps)
            return [
                PeriodicContender(name: "FrameLink.\(fps)", cpuScope: .process) { frames, _, samples in
                    let cpu0 = processCPUNanoseconds()
                    let round = frameRound(samples: samples, period: period, frames: frames)
                    let link = FrameLink(preferredFramesPerSecond: fps, scheduler: engine) { round.fired($0) }
                    await round.done.wait()
                    link.invalidate()
                    return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: round.grid.missed,
                                        earlyByOwnClock: round.earlyByOwnClock)
                },
                PeriodicContender(name: "DispatchSourceTimer.\(fps)", cpuScope: .process) { frames, _, samples in
                    try await Periodic.dispatchSourceTimer(frames, period, samples)
                },
            ]
        }
    }
}
