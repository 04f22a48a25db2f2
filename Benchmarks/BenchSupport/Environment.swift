//===----------------------------------------------------------------------===//
// What machine and build the figures come from.
//===----------------------------------------------------------------------===//
import CMonoClock
import Dispatch
import Foundation
import PrecisionTimer

#if canImport(Glibc)
import Glibc
#endif

/// A fresh thread's answer: written before its latch's signal, read after.
private final class FreshThreadBox<T>: @unchecked Sendable {
    var value: T?
}

struct BenchEnvironment: Codable, Sendable {
    var kernel: String
    var cpu: String
    var cores: Int
    var clocksource: String
    var timerSlackNs: UInt64
    var build: String
    var swift: String
    var glibc: String
    /// DispatchTime.now() minus CLOCK_MONOTONIC (should be ~0: same clock).
    var dispatchUptimeOffsetNs: Int64
    /// CLOCK_BOOTTIME minus CLOCK_MONOTONIC (time spent suspended).
    var boottimeOffsetNs: Int64
    /// Whether a scheduler thread got SCHED_FIFO: "granted (SCHED_FIFO 80)" or why not.
    var realtime: String = "not probed"
    /// The fair scheduler's time slice of a default TimerScheduler's thread
    /// (its `Options.timeSlice`), beside a new thread's.
    var schedulerTimeSlice: String = "not probed"
    /// The cyclictest used (path and how it is run), or why it is not.
    var cyclictest: String = "not probed"

    static var buildKind: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    static var swiftVersion: String {
        #if compiler(>=6.5)
        return "6.5+"
        #elseif compiler(>=6.4)
        return "6.4"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #elseif compiler(>=6.1)
        return "6.1"
        #else
        return "6.0"
        #endif
    }

    static func read(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func cpuModel() -> String {
        guard let info = read("/proc/cpuinfo") else { return "unknown" }
        for line in info.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == "model name" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    /// `body`'s result on a freshly created thread (what such a thread starts
    /// with), or nil should the thread not answer within 5 s.
    static func onFreshThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        let result = Latch()
        let box = FreshThreadBox<T>()
        let thread = Thread {
            box.value = body()
            result.signal()
        }
        thread.start()
        _ = result.waitBlocking(timeoutNs: 5_000_000_000)
        return box.value
    }

    /// The timer slack a freshly created thread starts with.
    static func freshThreadSlack() -> UInt64 {
        onFreshThread { () -> UInt64 in
            var slack: UInt64 = 0
            return cmc_timer_slack_get(&slack) == 0 ? slack : 0
        } ?? 0
    }

    /// The time slice a default TimerScheduler's thread got, beside the one a
    /// new thread has (the kernel's default): every other contender's threads
    /// keep that default.
    static func timeSliceProbe() -> String {
        let fresh = onFreshThread { ThreadControls.timeSlice() } ?? nil
        let theirs = fresh.map { Fmt.duration($0.benchNanoseconds) } ?? "none reported"
        guard let probe = try? TimerScheduler(options: .init(name: "bench-sliceprobe")) else { return "not available" }
        let report = probe.threadReport
        if let errno = report.timeSliceError { return "refused (\(errno)); a new thread's: \(theirs)" }
        guard let slice = report.timeSlice else { return "none reported by this kernel" }
        return "\(Fmt.duration(slice.benchNanoseconds)) (a new thread's: \(theirs))"
    }

    /// "2.36", from confstr(_CS_GNU_LIBC_VERSION).
    static func glibcVersion() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count)
        guard n > 0 && n <= buffer.count else { return "unknown" }
        let text = String(decoding: buffer.prefix(n - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasPrefix("glibc ") ? String(text.dropFirst(6)) : text
    }

    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC, read as boottime between two monotonic reads.
    static func boottimeOffset() -> Int64 {
        let a = cmc_now_ns(cmc_clock_monotonic)
        let b = cmc_now_ns(cmc_clock_boottime)
        let c = cmc_now_ns(cmc_clock_monotonic)
        return b - (a + (c - a) / 2)
    }

    /// Asks for a SCHED_FIFO 80 scheduler thread and reports what it got.
    static func realtimeProbe() -> String {
        guard let probe = try? TimerScheduler(options: .init(priority: .realtime(80), name: "bench-rtprobe")) else {
            return "not available"
        }
        switch probe.threadReport.realtime {
        case .granted(let priority): return "granted (SCHED_FIFO \(priority))"
        case .refused(let errno): return "refused (\(errno))"
        case .notRequested: return "not requested"
        }
    }

    /// Warnings about figures this environment makes unreliable.
    func warnings(load: MachineLoad?) -> [String] {
        var w: [String] = []
        if build == "debug" {
            w.append("debug build: per-call costs are inflated; use `swift run -c release bench`")
        }
        if clocksource != "tsc" {
            w.append("clocksource is \(clocksource), not tsc: clock reads may be slow or coarse, "
                     + "and lateness includes that cost")
        }
        if let load, load.isNoisy {
            w.append("noisy run: other processes used \(Fmt.fixed(load.otherBusyPercent, 1)) % and the hypervisor "
                     + "stole \(Fmt.fixed(load.stealPercent, 1)) % of the machine; tail figures are unreliable")
        }
        if !realtime.hasPrefix("granted") {
            w.append("no realtime priority (\(realtime)): RepeatingTimer.realtime is not measured")
        }
        return w
    }

    static func current() -> BenchEnvironment {
        var dispatchOffset = Int64.max
        for _ in 0..<5 {
            let a = cmc_now_ns(cmc_clock_monotonic)
            let d = Int64(DispatchTime.now().uptimeNanoseconds)
            let b = cmc_now_ns(cmc_clock_monotonic)
            let off = d - (a + (b - a) / 2)
            if abs(off) < abs(dispatchOffset) { dispatchOffset = off }
        }
        return BenchEnvironment(
            kernel: read("/proc/sys/kernel/osrelease") ?? "unknown",
            cpu: cpuModel(),
            cores: Int(cmc_cpu_count()),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource") ?? "unknown",
            timerSlackNs: freshThreadSlack(),
            build: buildKind,
            swift: swiftVersion,
            glibc: glibcVersion(),
            dispatchUptimeOffsetNs: dispatchOffset,
            boottimeOffsetNs: boottimeOffset(),
            realtime: realtimeProbe(),
            schedulerTimeSlice: timeSliceProbe())
    }
}
