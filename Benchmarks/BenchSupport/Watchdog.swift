//===----------------------------------------------------------------------===//
// A watchdog: if a contender's round does not finish in time (a library call
// hung), say which one on stderr and exit instead of hanging silently.
//===----------------------------------------------------------------------===//
import Dispatch
import Foundation
import Synchronization

final class Watchdog: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var label = ""
        var deadline = Int64.max
    }

    private let state = Mutex(State())
    private let bell = DispatchSemaphore(value: 0)

    static let shared: Watchdog = {
        let w = Watchdog()
        w.startThread()
        return w
    }()

    private func startThread() {
        let thread = Thread { [self] in
            while true {
                let s = state.withLock { $0 }
                if s.deadline == .max {
                    bell.wait()
                    continue
                }
                let wake = DispatchTime(uptimeNanoseconds: UInt64(Swift.max(1, s.deadline)))
                if bell.wait(timeout: wake) == .timedOut {
                    let expired = state.withLock { $0.generation == s.generation && $0.deadline != .max }
                    if expired && monoNow() >= s.deadline {
                        progress("bench: HANG: \(s.label) did not finish in time; exiting (status 3).")
                        exit(3)
                    }
                }
            }
        }
        thread.name = "bench-watchdog"
        thread.start()
    }

    /// Starts watching: `label` must finish within `seconds`.
    func arm(_ label: String, seconds: Double) {
        state.withLock {
            $0.generation &+= 1
            $0.label = label
            $0.deadline = monoNow() + Int64(seconds * 1e9)
        }
        bell.signal()
    }

    func disarm() {
        state.withLock {
            $0.generation &+= 1
            $0.deadline = .max
        }
        bell.signal()
    }
}
