// A hello-world of PrecisionTimerMetrics: a repeating timer on a scheduler of
// its own, whose statistics are exported through swift-metrics. Nothing is
// bootstrapped, so the exporter uses swift-metrics' default factory (which
// drops the values): what is checked is that the product builds, links and runs.
import Dispatch
import Glibc
import PrecisionTimer
import PrecisionTimerMetrics

let scheduler = try TimerScheduler(options: .init(name: "consumer"))
let metrics = SchedulerMetrics(scheduler: scheduler, name: "consumer")
let done = DispatchSemaphore(value: 0)
let timer = scheduler.repeating(every: .milliseconds(1)) { tick in
    if tick.index == 9 {  // the tenth tick
        tick.cancelTimer()
        done.signal()
    }
}
done.wait()
// The handler's cancel takes effect, and its fire is counted, when it returns.
while scheduler.statistics.liveTimers > 0 { usleep(100) }
metrics.export()
let statistics = scheduler.statistics
print("consumer-metrics: exported \(statistics.fires) fires, lateness \(statistics.lateness.summary)")
withExtendedLifetime(timer) {}  // releasing the timer cancels it: keep it to its tenth tick
