// A terminal FPS meter: a FrameLink at 60 fps feeds a RateMeter, and once a
// second the achieved rate as of that moment is printed (a stalled link reads as
// stalled), coloured by how close it is to the target (green within 1 %, yellow
// within 5 %, red beyond), with the median and p99 frame intervals, the jitter
// and the worst lateness of a frame, as a person writes durations (`1.3 µs`).
// At the end, or on Ctrl-C (SIGINT) or SIGTERM, a summary of the whole run.
//
//     swift run -c release fps-meter [seconds] [fps]
//     swift run -c release fps-meter --seconds 30 --fps 120 | tee fps.log
//
// It behaves as a command-line tool should: stdout is line-buffered (each line
// reaches a pipe as it is printed), colour only goes to a terminal and never
// when NO_COLOR is set (https://no-color.org: a non-empty value), and a stop
// signal ends the run with its summary and exit status 0.

// Glibc declares stdout and stderr as mutable globals, which Swift 6 rejects
// unless the module is imported @preconcurrency (first, before any other import).
@preconcurrency import Glibc
import Dispatch
import ExampleSupport
import PrecisionTimer
import Synchronization

@main
struct FPSMeter {
    static let usage = """
        usage: fps-meter [seconds] [fps]
               fps-meter [--seconds N] [--fps N]

        Runs a FrameLink at fps frames per second (default 60, at most 1000000) for
        the given whole seconds (default 10), printing the achieved rate once a second
        and a summary at the end. Ctrl-C (SIGINT) or SIGTERM stops it early, with the
        summary. Colour only on a terminal, and not when NO_COLOR is set.
        """

    /// What the frame callback records; the main thread reads it under the same lock.
    struct Measurements {
        var meter = RateMeter()  // a one-second window
        var frames = 0
        var dropped = 0
        var firstFrame: PrecisionClock.Instant?
        var lastFrame: PrecisionClock.Instant?
        var worstLateness: Duration = .zero  // since the last line
        var worstLatenessOverall: Duration = .zero
    }

    static func main() {
        setvbuf(stdout, nil, _IOLBF, 0)
        let arguments = ExampleCommand(program: "fps-meter", usage: usage).wholeNumbers([
            .init("seconds", default: 10, maximum: Int(Int32.max)), .init("fps", default: 60, maximum: 1_000_000),
        ])
        let (seconds, target) = (arguments[0], arguments[1])
        let colour = printsColour

        // Stop on SIGINT or SIGTERM: the handler notes the signal and wakes the loop below.
        let stopSignal = Atomic<Int32>(0)
        let stop = DispatchSemaphore(value: 0)
        let signalSources = onStopSignal { signal in
            stopSignal.store(signal, ordering: .relaxed)
            stop.signal()
        }

        let measurements = Mutex(Measurements())
        let clock = PrecisionClock.monotonic  // Dispatch's clock too: `next.dispatchTime` below
        let started = clock.now
        let link = FrameLink(preferredFramesPerSecond: target) { frame in
            let lateness = frame.timestamp.duration(to: frame.firedAt)
            measurements.withLock {
                $0.meter.record(at: frame.firedAt)
                $0.frames += 1
                $0.dropped += frame.dropped
                if $0.firstFrame == nil { $0.firstFrame = frame.firedAt }
                $0.lastFrame = frame.firedAt
                $0.worstLateness = max($0.worstLateness, lateness)
                $0.worstLatenessOverall = max($0.worstLatenessOverall, lateness)
            }
        }

        var next = started
        for second in 1...seconds {
            next += .seconds(1)
            if stop.wait(timeout: next.dispatchTime) == .success { break }  // a stop signal
            let (stats, dropped, worstLateness) = measurements.withLock { m in
                defer { m.worstLateness = .zero }
                return (m.meter.statistics(asOf: clock.now), m.dropped, m.worstLateness)
            }
            print(line(second: second, stats: stats, target: target, dropped: dropped,
                       worstLateness: worstLateness, colour: colour))
        }
        link.invalidate()
        let ran = started.duration(to: clock.now)
        print(summary(measurements.withLock { $0 }, target: target, ran: ran,
                      signal: stopSignal.load(ordering: .relaxed)))
        withExtendedLifetime(signalSources) {}
    }

    static func line(second: Int, stats: RateMeter.Statistics, target: Int, dropped: Int,
                     worstLateness: Duration, colour: Bool) -> String {
        let error = abs(stats.rate - Double(target)) / Double(target)
        let (on, off) = !colour ? ("", "")
            : (error <= 0.01 ? "\u{1B}[32m" : (error <= 0.05 ? "\u{1B}[33m" : "\u{1B}[31m"), "\u{1B}[0m")
        return "\(pad(String(second), 3)) s  \(on)\(fixed(stats.rate, 2)) fps\(off) (target \(target))"
            + "  interval \(ms(stats.minInterval))–\(ms(stats.maxInterval)) ms"
            + " (p50 \(ms(stats.p50Interval)), p99 \(ms(stats.p99Interval)))"
            + "  jitter \(stats.jitter.readable)  worst lateness \(worstLateness.readable)  dropped \(dropped)"
    }

    /// The whole run: how long, how many frames at what average rate, dropped
    /// frames and the worst lateness; `signal` is the stop signal (0: none).
    static func summary(_ m: Measurements, target: Int, ran: Duration, signal: Int32) -> String {
        let how = signal == 0 ? "ran" : "stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM") after"
        var rate = "–"
        if let first = m.firstFrame, let last = m.lastFrame, m.frames >= 2 {
            rate = fixed(Double(m.frames - 1) / (Double(nanoseconds(first.duration(to: last))) / 1e9), 2)
        }
        return "summary: \(how) \(fixed(Double(nanoseconds(ran)) / 1e9, 2)) s  frames \(m.frames)"
            + "  average \(rate) fps (target \(target))  dropped \(m.dropped)"
            + "  worst lateness \(m.worstLatenessOverall.readable)"
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
    }

    static func ms(_ d: Duration) -> String { fixed(Double(nanoseconds(d)) / 1e6, 3) }

    static func fixed(_ x: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((x * scale).rounded())
        let whole = scaled / Int64(scale)
        var frac = String(abs(scaled % Int64(scale)))
        while frac.count < digits { frac = "0" + frac }
        return digits == 0 ? "\(whole)" : "\(whole).\(frac)"
    }

    static func pad(_ s: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - s.count)) + s
    }
}
