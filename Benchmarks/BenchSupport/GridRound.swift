//===----------------------------------------------------------------------===//
// One round of a contender whose timer calls back (a RepeatingTimer's ticks, a
// FrameLink's frames, a Foundation.Timer's fires): the grid it is measured on
// (TickGrid.swift), its samples and counts, and the latch the round waits on.
// What differs from one timer to the next is only what a callback reports and
// how the last one stops the timer; both are given to `init`.
//===----------------------------------------------------------------------===//

/// The state of one round of a callback-driven contender, for callbacks that
/// hand over an `Event` (a `Tick`, a `FrameLink.Frame`, a `Timer`). Touched only
/// on the thread the timer calls back on.
final class GridRound<Event>: @unchecked Sendable {
    let samples: SampleBuffer
    /// Signalled by the callback that serves the grid's last tick.
    let done = Latch()
    var grid: TickGrid
    /// Set by the callback that serves the grid's last tick: later ones are ignored.
    private(set) var finished = false
    /// Callbacks whose reported deadline was not on the drift-free grid.
    var gridMismatches = 0
    /// Callbacks that our own clock read placed before their deadline.
    var earlyByOwnClock = 0
    private let serve: (GridRound, Event, _ now: Int64) -> Void
    private let finish: (Event) -> Void

    /// - Parameters:
    ///   - finish: what the callback that serves the last tick does before
    ///     `done` is signalled (a timer that would go on firing is stopped here).
    ///   - serve: records one callback's event, read at `now` (the clock read
    ///     first thing in the callback): appends its lateness sample to
    ///     `samples`, serves its ticks on `grid`, counts what it got wrong.
    init(samples: SampleBuffer, grid: TickGrid, finish: @escaping (Event) -> Void = { _ in },
         serve: @escaping (_ round: GridRound, _ event: Event, _ now: Int64) -> Void) {
        self.samples = samples
        self.grid = grid
        self.finish = finish
        self.serve = serve
    }

    /// The timer's callback.
    func fired(_ event: Event) {
        let now = monoNow()
        guard !finished else { return }
        serve(self, event, now)
        if grid.finished {
            finished = true
            finish(event)
            done.signal()
        }
    }
}
