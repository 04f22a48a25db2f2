// precondition-probe: makes one bad call of the public API, named by its first
// argument, so that PreconditionTrapTests can check that the call stops the
// process with its precondition message. `--list` prints the cases, one a line:
// the name, a tab, and the message the call must print.
//
// A separate process because a trap ends the process it happens in: no XCTest
// method survives one, under a sanitizer or not.
import Dispatch
import PrecisionTimer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

final class Owner: Sendable {}

/// A scheduler on virtual time: nothing here waits for real time.
func scheduler() -> TimerScheduler { TimerScheduler(clock: VirtualClock()) }

let raw = PrecisionClock(.monotonicRaw)
let negative = Duration.nanoseconds(-1)

/// Runs an async bad call to its end (or its trap) from this synchronous code.
func runAsync(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await body()
        done.signal()
    }
    done.wait()
}

/// An actor whose executor comes from a scheduler that nothing keeps alive
/// (the scheduler is released at the end of `init`).
actor OnAForgottenScheduler {
    nonisolated let executor: UnownedSerialExecutor
    init() {
        executor = try! TimerScheduler(options: .init(name: "forgotten")).asUnownedSerialExecutor()
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }
    private var pings = 0
    /// Touches the actor's state, so the call must run on its executor.
    func ping() -> Int {
        pings += 1
        return pings
    }
}

/// Each case: the message fragment the trap must print, and the bad call.
let cases: [(name: String, message: String, call: () -> Void)] = [
    ("schedule(after:)", "schedule(after:clock:leeway:delivery:_:): the kernel cannot sleep on \(raw.source)",
     { _ = scheduler().schedule(after: .seconds(1), clock: raw) { _ in } }),
    ("schedule(at:)", "schedule(at:clock:leeway:delivery:_:): the kernel cannot sleep on \(raw.source)",
     { _ = scheduler().schedule(at: .min, clock: raw) { _ in } }),
    ("schedule(afterSeconds:)",
     "schedule(afterSeconds:clock:leeway:delivery:_:): delay must be a finite number of seconds (got nan)",
     { _ = scheduler().schedule(afterSeconds: .nan) { _ in } }),
    ("schedule(after:owner:)",
     "schedule(after:clock:leeway:delivery:owner:_:): the kernel cannot sleep on \(raw.source)",
     { _ = scheduler().schedule(after: .seconds(1), clock: raw, owner: Owner()) { _, _ in } }),
    ("repeating(every:)", "repeating(every:clock:leeway:policy:delivery:recordsLateness:_:): the interval must be positive (got \(Duration.zero))",
     { _ = scheduler().repeating(every: .zero) { _ in } }),
    ("repeating(every:owner:)",
     "repeating(every:clock:leeway:policy:delivery:recordsLateness:owner:_:): the interval must be positive (got \(negative))",
     { _ = scheduler().repeating(every: negative, owner: Owner()) { _, _ in } }),
    ("repeating(every: TimerInterval)",
     "repeating(every:clock:leeway:policy:delivery:recordsLateness:_:): the kernel cannot sleep on \(raw.source)",
     { _ = scheduler().repeating(every: try! TimerInterval(.seconds(1)), clock: raw) { _ in } }),
    ("repeating(ticks:per:)", "repeating(ticks:per:clock:leeway:policy:delivery:recordsLateness:_:): ticks must be in 1...9223372036 (got 0)",
     { _ = scheduler().repeating(ticks: 0, per: .seconds(1)) { _ in } }),
    ("repeating(everySeconds:)",
     "repeating(everySeconds:clock:leeway:policy:delivery:recordsLateness:_:): the interval must be positive (got \(Duration.zero))",
     { _ = scheduler().repeating(everySeconds: 0) { _ in } }),
    ("ticks(every:)", "ticks(every:clock:leeway:policy:buffering:): buffering must keep at least one tick (got 0)",
     { _ = scheduler().ticks(every: .seconds(1), buffering: .newest(0)) }),
    ("RepeatingTimer.setInterval", "setInterval(_:): the interval must be positive (got \(Duration.zero))",
     { scheduler().repeating(every: .seconds(1)) { _ in }.setInterval(.zero) }),
    ("RepeatingTimer.setRate", "setRate(ticks:per:): ticks must be in 1...9223372036 (got -1)",
     { scheduler().repeating(every: .seconds(1)) { _ in }.setRate(ticks: -1, per: .seconds(1)) }),
    ("Tick.setInterval", "setInterval(_:): the interval must be positive (got \(Duration.seconds(-1)))", {
        let clock = VirtualClock()
        let timer = TimerScheduler(clock: clock).repeating(every: .seconds(1)) { tick in tick.setInterval(.seconds(-1)) }
        clock.advance(by: .seconds(1))
        withExtendedLifetime(timer) {}
    }),
    ("Tick.setRate", "setRate(ticks:per:): the span must be positive (got \(Duration.zero))", {
        let clock = VirtualClock()
        let timer = TimerScheduler(clock: clock).repeating(every: .seconds(1)) { tick in tick.setRate(ticks: 1, per: .zero) }
        clock.advance(by: .seconds(1))
        withExtendedLifetime(timer) {}
    }),
    ("FrameLink(preferredFramesPerSecond:)",
     "init(preferredFramesPerSecond:scheduler:clock:delivery:_:): preferredFramesPerSecond must be in 1...1000000 frames per second (got 0)",
     { _ = FrameLink(preferredFramesPerSecond: 0, scheduler: scheduler()) { _ in } }),
    ("FrameLink(preferredFramesPerSecond:owner:)",
     "init(preferredFramesPerSecond:owner:scheduler:clock:delivery:_:): the kernel cannot sleep on \(raw.source)",
     { _ = FrameLink(preferredFramesPerSecond: 60, owner: Owner(), scheduler: scheduler(), clock: raw) { _, _ in } }),
    ("FrameLink(frames:per:)", "init(frames:per:scheduler:clock:delivery:_:): ticks must be in 1...9223372036 (got 0)",
     { _ = FrameLink(frames: 0, per: .seconds(1), scheduler: scheduler()) { _ in } }),
    ("FrameLink(baseRate:frameInterval:)",
     "init(baseRate:frameInterval:scheduler:clock:delivery:_:): frameInterval must be positive (got 0)",
     { _ = FrameLink(frameInterval: 0, scheduler: scheduler()) { _ in } }),
    ("FrameLink(every:)", "init(every:scheduler:clock:delivery:_:): the kernel cannot sleep on \(raw.source)",
     { _ = FrameLink(every: try! TimerInterval(ticks: 60, per: .seconds(1)), scheduler: scheduler(), clock: raw) { _ in } }),
    ("FrameLink.setPreferredFramesPerSecond",
     "setPreferredFramesPerSecond(_:): fps must be in 1...1000000 frames per second (got 1000001)",
     { FrameLink(preferredFramesPerSecond: 60, scheduler: scheduler()) { _ in }.setPreferredFramesPerSecond(1_000_001) }),
    ("TaskRegistry.schedule", "schedule(_:after:repeating:on:leeway:_:): the interval must be positive (got \(Duration.zero))",
     { TaskRegistry(scheduler: scheduler()).schedule("k", after: .zero, repeating: .zero) {} }),
    ("RateMeter(window:)", "init(window:clock:): the window must be positive (got \(Duration.zero))",
     { _ = RateMeter(window: .zero) }),
    ("LatencyHistogram.percentile", "LatencyHistogram.percentile(_:): the percentile is NaN",
     { _ = LatencyHistogram().percentile(.nan) }),
    ("actor on a released TimerScheduler",
     "an actor's job was sent to the TimerScheduler 'forgotten' after that scheduler was released",
     {
         let actor = OnAForgottenScheduler()
         usleep(50_000)  // the released scheduler's thread has ended by now
         runAsync { _ = await actor.ping() }
     }),
]

// A call that hangs instead of stopping is ended by SIGALRM, without its
// message: the test then fails on the missing message rather than hanging.
alarm(30)
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--list" {
    for c in cases { print("\(c.name)\t\(c.message)") }
    exit(0)
}
guard let name = arguments.first, let c = cases.first(where: { $0.name == name }) else {
    print("usage: precondition-probe --list | <case>")
    exit(64)
}
c.call()
// Reaching this line means the precondition did not stop the call.
print("returned")
exit(0)
