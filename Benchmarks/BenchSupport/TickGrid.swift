//===----------------------------------------------------------------------===//
// The grid loop: one home for the drift-free grid every timing scenario runs
// on, and for the account of a timer's fires on it.
//
// Tick k is due at start + k × interval. Each fire (a handler call, or a wake
// of a waiting loop) serves a run of consecutive ticks that begins with the
// earliest tick not yet served (`next`); the further ticks it stands for count
// as missed. Who says how many ticks a fire serves:
//  - the timer itself (Dispatch's `data`, a Tick's or Frame's `missed`/`index`):
//    `fire(missed:last:)`;
//  - otherwise the one rule of the lateness scenarios, `wake(lateness:)`: a wake
//    serves tick `next` and every later tick already due by then. (A loop that
//    wakes 3.5 intervals late records one sample of 3.5 intervals and 3 missed
//    ticks, as a DispatchSourceTimer firing once with `data` 4 does.)
// `run` is the loop of every contender that waits for a deadline itself.
//===----------------------------------------------------------------------===//

struct TickGrid: Sendable {
    /// When tick 0 is due (on the clock of whoever measures; 0 for a grid
    /// relative to an instant of another clock).
    let start: Int64
    let interval: Int64
    /// Ticks in the run (`Int.max` for a run bounded by time instead).
    let ticks: Int
    /// The earliest tick not yet served.
    private(set) var next = 0
    /// Fires recorded (handler calls or wakes).
    private(set) var fires = 0
    /// Ticks served by a fire that was not their own.
    private(set) var missed = 0

    init(start: Int64, interval: Int64, ticks: Int = .max) {
        self.start = start
        self.interval = interval
        self.ticks = ticks
    }

    @inline(__always)
    func deadline(_ k: Int) -> Int64 { start + Int64(k) * interval }

    /// The deadline of the earliest tick not yet served.
    var nextDeadline: Int64 { deadline(next) }

    /// Every tick of the run has been served.
    var finished: Bool { next >= ticks }

    /// The last tick served so far (-1 before the first fire).
    var lastServed: Int { next - 1 }

    /// Records one fire that the timer accounts for: it serves tick `next` and
    /// `missed` ticks after it, or (when the timer reports the tick it stands
    /// for) every tick through `last`, with `missed` as the timer reported it.
    /// Missed ticks past the run's last tick are not the run's and are not
    /// counted, so fires plus missed ticks never exceed `ticks`.
    @inline(__always)
    mutating func fire(missed m: Int = 0, last: Int? = nil) {
        fires += 1
        missed += Swift.max(0, Swift.min(m, ticks - next - 1))
        next = (last ?? next + m) + 1
    }

    /// Records one wake `lateness` after tick `next`'s deadline under the rule:
    /// it serves that tick and every later tick already due. Returns `lateness`
    /// (the sample: against the earliest tick the wake serves).
    @inline(__always)
    @discardableResult
    mutating func wake(lateness: Int64) -> Int64 {
        fire(missed: Int(Swift.max(0, lateness) / interval))
        return lateness
    }

    /// `wake(lateness:)` for a wake at `now`, on the grid's own clock.
    @inline(__always)
    @discardableResult
    mutating func wake(at now: Int64) -> Int64 {
        wake(lateness: now - nextDeadline)
    }

    /// The loop of a contender that waits for each deadline itself: waits for
    /// the earliest tick not yet served (`wait` gets its deadline and returns
    /// how late it woke), records the lateness, serves ticks by the rule, until
    /// `ticks` ticks are served. Returns the ticks missed.
    static func run(ticks: Int, start: Int64, interval: Int64, samples: SampleBuffer,
                    wait: (_ deadline: Int64) throws -> Int64) rethrows -> Int {
        var grid = TickGrid(start: start, interval: interval, ticks: ticks)
        while !grid.finished {
            samples.append(grid.wake(lateness: try wait(grid.nextDeadline)))
        }
        return grid.missed
    }

    /// `run` for a wait that suspends a task.
    static func run(ticks: Int, start: Int64, interval: Int64, samples: SampleBuffer,
                    wait: (_ deadline: Int64) async throws -> Int64) async rethrows -> Int {
        var grid = TickGrid(start: start, interval: interval, ticks: ticks)
        while !grid.finished {
            samples.append(grid.wake(lateness: try await wait(grid.nextDeadline)))
        }
        return grid.missed
    }
}
