// A hello-world of the library: one one-shot timer on the shared scheduler.
import Dispatch
import PrecisionTimer

let fired = DispatchSemaphore(value: 0)
let timer = TimerScheduler.shared.schedule(after: .milliseconds(10)) { tick in
    print("consumer: a one-shot timer fired \(tick.lateness.readable) late")
    fired.signal()
}
fired.wait()
withExtendedLifetime(timer) {}  // releasing the timer cancels it: keep it until it fires
