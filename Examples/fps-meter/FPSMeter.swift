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
        let (seconds, target) = parseArguments()
        let noColour = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false  // set and not empty
        let colour = isatty(STDOUT_FILENO) == 1 && !noColour

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

    /// Calls `handler` (on a Dispatch queue) with the signal when SIGINT or
    /// SIGTERM arrives, instead of the process ending. Keep the sources returned.
    static func onStopSignal(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        // Blocked in this thread (the threads of Dispatch and of the timer schedulers
        // block them already), a signal stays pending until its source takes it,
        // instead of ending the process.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGINT, SIGTERM] { sigaddset(&blocked, signal) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        return [SIGINT, SIGTERM].map { signal in
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler { handler(signal) }
            source.resume()
            return source
        }
    }

    /// `[seconds] [fps]`, or `--seconds N` and `--fps N` (also `--fps=N`). Prints
    /// the usage and exits on `--help` (status 0) and on bad input (status 2).
    static func parseArguments() -> (seconds: Int, fps: Int) {
        var values = ["seconds": 10, "fps": 60]
        var positions = ["seconds", "fps"][...]
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            if argument == "-h" || argument == "--help" {
                print(usage)
                exit(0)
            }
            let name: String
            let value: String?
            if argument.hasPrefix("--") {
                let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
                name = parts.first ?? ""
                value = parts.count == 2 ? parts[1] : arguments.popFirst()
            } else if let position = positions.popFirst() {
                (name, value) = (position, argument)
            } else {
                usageError("unexpected argument '\(argument)'")
            }
            guard values[name] != nil else { usageError("unknown option '\(argument)'") }
            let limit = name == "fps" ? 1_000_000 : Int(Int32.max)
            guard let value, let n = Int(value), n >= 1, n <= limit else {
                usageError("\(name) must be a whole number from 1 to \(limit)")
            }
            values[name] = n
        }
        return (values["seconds"]!, values["fps"]!)
    }

    static func usageError(_ message: String) -> Never {
        fputs("fps-meter: \(message)\n\n\(usage)\n", stderr)
        exit(2)
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
