//===----------------------------------------------------------------------===//
// SwiftNIO's event-loop timers as contenders (a dependency of the bench only):
//  - `NIO.scheduleTask` (periodic-1khz, periodic-1khz-load): a chain of
//    `EventLoop.scheduleTask(deadline:)` on the absolute deadlines of the grid,
//    each task scheduling the next at the earliest grid deadline not yet
//    served, as NIO users run a fixed rate; the same lateness rule as every
//    contender (TickGrid).
//  - `NIO.scheduleRepeatedTask` (drift): `EventLoop.scheduleRepeatedTask`,
//    fixed delay (the next run is scheduled `delay` after this one ran), call k
//    counted against grid tick k: its drift behind the grid.
// Each runs on a MultiThreadedEventLoopGroup of one thread, made for the
// scenario and shut down after it. NIODeadline is CLOCK_MONOTONIC on Linux,
// the grid's clock.
//===----------------------------------------------------------------------===//
import CMonoClock
import NIOCore
import NIOPosix

enum NIOTimers {
    static let scheduleTaskName = "NIO.scheduleTask"
    static let repeatedTaskName = "NIO.scheduleRepeatedTask"

    /// The event loop group a scenario's NIO contenders run on (one thread);
    /// the scenario shuts it down (`shutdownGracefully()`).
    static func group() -> MultiThreadedEventLoopGroup {
        MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// `body`'s result, after shutting `group` down (also when `body` throws).
    static func shuttingDown<T: Sendable>(_ group: MultiThreadedEventLoopGroup,
                                          _ body: () async throws -> T) async throws -> T {
        let value: T
        do {
            value = try await body()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
        return value
    }

    /// State of a round; touched only on the event loop.
    final class Chain: @unchecked Sendable {
        let loop: any EventLoop
        let samples: SampleBuffer
        let done = Latch()
        var grid: TickGrid

        init(loop: any EventLoop, samples: SampleBuffer, grid: TickGrid) {
            self.loop = loop
            self.samples = samples
            self.grid = grid
        }

        /// Schedules the earliest grid deadline not yet served.
        func scheduleNext() {
            loop.scheduleTask(deadline: .uptimeNanoseconds(UInt64(grid.nextDeadline))) { self.fired() }
        }

        func fired() {
            samples.append(grid.wake(at: monoNow()))
            if grid.finished {
                done.signal()
            } else {
                scheduleNext()
            }
        }

        /// Fixed delay: every call is the next tick (the grid is only the yardstick).
        func repeatedFired(_ task: RepeatedTask) {
            samples.append(monoNow() - grid.nextDeadline)
            grid.fire()
            if grid.finished {
                task.cancel()
                done.signal()
            }
        }
    }

    static func scheduleTask(group: MultiThreadedEventLoopGroup) -> PeriodicContender {
        let note = "\(scheduleTaskName): EventLoop.scheduleTask(deadline:) chained on the grid's absolute deadlines "
            + "(each task schedules the next), one event loop thread"
        return PeriodicContender(name: scheduleTaskName, cpuScope: .process, note: note) { ticks, interval, samples in
            let cpu0 = processCPUNanoseconds()
            let loop = group.next()
            let chain = Chain(loop: loop, samples: samples,
                              grid: TickGrid(start: monoNow() + interval, interval: interval, ticks: ticks))
            loop.execute { chain.scheduleNext() }
            await chain.done.wait()
            return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0, skipped: chain.grid.missed)
        }
    }

    static func repeatedTask(group: MultiThreadedEventLoopGroup) -> PeriodicContender {
        PeriodicContender(name: repeatedTaskName, cpuScope: .process) { ticks, interval, samples in
            let cpu0 = processCPUNanoseconds()
            let loop = group.next()
            let start = monoNow() + interval
            let chain = Chain(loop: loop, samples: samples,
                              grid: TickGrid(start: start, interval: interval, ticks: ticks))
            loop.execute {
                // Scheduled on the loop so the first run is due at the grid's start.
                let delay = TimeAmount.nanoseconds(interval)
                let initial = TimeAmount.nanoseconds(Swift.max(0, start - monoNow()))
                loop.scheduleRepeatedTask(initialDelay: initial, delay: delay) { chain.repeatedFired($0) }
            }
            await chain.done.wait()
            return RoundOutcome(cpuNs: processCPUNanoseconds() - cpu0)
        }
    }
}
