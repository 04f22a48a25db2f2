import Foundation
@testable import PrecisionTimer

/// A 1 ms one-shot on each long-lived scheduler, over and over: a scheduler
/// whose thread is stuck leaves one unfired, and the watchdog names it.
func heartbeatWorker(_ world: ChaosWorld, _ schedulers: [String: TimerScheduler]) {
    let watchdog = world.watchdog
    var outstanding: [String: (timer: OneShotTimer, fired: DeinitFlag)] = [:]
    while world.running {
        for (name, scheduler) in schedulers.sorted(by: { $0.key < $1.key }) {
            if let fired = outstanding[name]?.fired {
                guard fired.isSet else { continue }
                watchdog.guarded("heartbeat: release of a fired one-shot on \(name)") { outstanding[name] = nil }
            }
            let op = watchdog.begin("scheduler \(name) unresponsive: its 1 ms heartbeat one-shot never fired")
            let fired = DeinitFlag()
            let timer = scheduler.schedule(after: .milliseconds(1)) { _ in
                watchdog.end(op)
                fired.set()
            }
            outstanding[name] = (timer, fired)
        }
        usleep(50_000)
    }
    // Hand the unfired ones to a thread of their own: releasing one must not
    // block this worker (the watchdog has named them already, or will).
    let left = outstanding.values.map(\.timer)
    Thread { withExtendedLifetime(left) {} }.start()
}
