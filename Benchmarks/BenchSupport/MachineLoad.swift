//===----------------------------------------------------------------------===//
// How busy the rest of the machine was while a scenario ran: CPU time other
// processes used (from /proc/stat, minus this process's CPU) and hypervisor
// steal, as shares of the whole machine. Timing figures from a loaded machine
// are noise-dominated; this says how much to trust them.
//===----------------------------------------------------------------------===//
import CMonoClock
import Foundation

struct MachineLoad: Codable, Sendable {
    /// CPU used by everything but this process, % of all cores.
    var otherBusyPercent: Double
    /// Hypervisor steal time, % of all cores.
    var stealPercent: Double

    enum CodingKeys: String, CodingKey {
        case otherBusyPercent = "otherBusyPct", stealPercent = "stealPct"
    }

    struct Snapshot: Sendable {
        var realNs: Int64
        var processCPUNs: Int64
        /// user + nice + system + irq + softirq, in ns (jiffies × 10 ms).
        var busyNs: Int64
        var stealNs: Int64

        static func now() -> Snapshot {
            var busy: Int64 = 0
            var steal: Int64 = 0
            if let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) {
                let f = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
                if f.count >= 8 {
                    // USER_HZ is 100 on Linux: one jiffy is 10 ms.
                    busy = (f[0] + f[1] + f[2] + f[5] + f[6]) * 10_000_000
                    steal = f[7] * 10_000_000
                }
            }
            return Snapshot(realNs: monoNow(), processCPUNs: processCPUNanoseconds(), busyNs: busy, stealNs: steal)
        }
    }

    static func between(_ a: Snapshot, _ b: Snapshot) -> MachineLoad {
        let capacity = Double(b.realNs - a.realNs) * Double(Swift.max(1, cmc_cpu_count()))
        guard capacity > 0 else { return MachineLoad(otherBusyPercent: 0, stealPercent: 0) }
        let other = Double((b.busyNs - a.busyNs) - (b.processCPUNs - a.processCPUNs))
        func pct(_ v: Double) -> Double { (Swift.max(0, v / capacity * 100) * 100).rounded() / 100 }
        return MachineLoad(otherBusyPercent: pct(other), stealPercent: pct(Double(b.stealNs - a.stealNs)))
    }

    /// The share of the machine (other processes plus steal, %) above which a
    /// run is noisy: its tail figures, and the targets built on them, are
    /// unreliable.
    static let noisyAbovePercent = 5.0

    /// Whether others took more than ``noisyAbovePercent`` of the machine.
    var isNoisy: Bool { otherBusyPercent + stealPercent > Self.noisyAbovePercent }

    var summary: String {
        "other processes \(Fmt.fixed(otherBusyPercent, 1)) % of the machine, steal \(Fmt.fixed(stealPercent, 1)) %"
    }
}
