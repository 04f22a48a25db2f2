// A terminal FPS meter: a FrameLink at 60 fps feeds a RateMeter, and once a
// second the achieved rate as of that moment is printed (a stalled link reads as
// stalled), coloured by how close it is to the target (green within 1 %, yellow
// within 5 %, red beyond), with the median and p99 frame intervals, the jitter
// and the worst lateness of a frame, as a person writes durations (`1.3 µs`).
//
//     swift run -c release fps-meter [seconds] [fps]
import PrecisionTimer
import Synchronization

@main
struct FPSMeter {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        let seconds = arguments.first.flatMap(Int.init) ?? 10
        let target = arguments.dropFirst().first.flatMap(Int.init) ?? 60

        let meter = Mutex(RateMeter())  // a one-second window
        let dropped = Atomic<Int64>(0)
        let worstLateness = Atomic<Int64>(0)  // nanoseconds, since the last line
        let link = FrameLink(preferredFramesPerSecond: target) { frame in
            meter.withLock { $0.record(at: frame.firedAt) }
            dropped.add(Int64(frame.dropped), ordering: .relaxed)
            worstLateness.max(nanoseconds(frame.timestamp.duration(to: frame.firedAt)), ordering: .relaxed)
        }

        let clock = PrecisionClock()
        var next = clock.now
        for second in 1...max(1, seconds) {
            next += .seconds(1)
            try clock.wait(until: next, strategy: .sleep)
            let stats = meter.withLock { $0.statistics(asOf: clock.now) }
            let late = Duration.nanoseconds(worstLateness.exchange(0, ordering: .relaxed))
            print(line(second: second, stats: stats, target: target, dropped: dropped.load(ordering: .relaxed),
                       worstLateness: late))
        }
        link.invalidate()
    }

    static func line(second: Int, stats: RateMeter.Statistics, target: Int, dropped: Int64,
                     worstLateness: Duration) -> String {
        let error = abs(stats.rate - Double(target)) / Double(target)
        let colour = error <= 0.01 ? "\u{1B}[32m" : (error <= 0.05 ? "\u{1B}[33m" : "\u{1B}[31m")
        return "\(pad(String(second), 3)) s  \(colour)\(fixed(stats.rate, 2)) fps\u{1B}[0m (target \(target))"
            + "  interval \(ms(stats.minInterval))–\(ms(stats.maxInterval)) ms"
            + " (p50 \(ms(stats.p50Interval)), p99 \(ms(stats.p99Interval)))"
            + "  jitter \(stats.jitter.readable)  worst lateness \(worstLateness.readable)  dropped \(dropped)"
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
