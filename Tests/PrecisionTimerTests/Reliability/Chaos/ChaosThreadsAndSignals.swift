import CTestSupport
import Foundation
@testable import PrecisionTimer
import Synchronization
import TestSupport

/// Signals taken by ChaosTests' handlers (a C signal handler captures nothing,
/// so the counts are global). SIGUSR1 is installed with SA_RESTART, SIGUSR2
/// without.
let chaosRestartingSignals = Atomic<Int>(0)
let chaosInterruptingSignals = Atomic<Int>(0)

func installCountingSignalHandlers() {
    _ = chaosRestartingSignals.load(ordering: .relaxed)
    _ = chaosInterruptingSignals.load(ordering: .relaxed)
    installSignalHandler(SIGUSR1, restart: true) { _ in chaosRestartingSignals.add(1, ordering: .relaxed) }
    installSignalHandler(SIGUSR2, restart: false) { _ in chaosInterruptingSignals.add(1, ordering: .relaxed) }
}

/// The kernel ids of this process's threads.
func processThreads() -> [Int32] {
    var buffer = [Int32](repeating: 0, count: 8192)
    let n = buffer.withUnsafeMutableBufferPointer { ct_list_tasks($0.baseAddress!, Int32($0.count)) }
    return Array(buffer.prefix(Int(max(0, n))))
}

func threadName(_ tid: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: 64)
    let rc = buffer.withUnsafeMutableBufferPointer { ct_task_name(tid, $0.baseAddress!, Int32($0.count)) }
    guard rc == 0 else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// "name(tid)" of the threads whose name starts with `prefix`.
func chaosThreads(prefix: String) -> [String] {
    processThreads().compactMap { tid in
        guard let name = threadName(tid), name.hasPrefix(prefix) else { return nil }
        return "\(name)(\(tid))"
    }
}

/// Sends SIGUSR1 or SIGUSR2 to every thread of the process at random moments.
func signalSender(_ world: ChaosWorld, _ rng: inout SplitMix64) {
    let pid = getpid()
    var tids: [Int32] = []
    var listed: Int64 = 0
    var sent = 0
    while world.running {
        if monoNow() - listed > 5_000_000 {
            tids = processThreads()
            listed = monoNow()
        }
        for tid in tids where ct_tgkill(pid, tid, Bool.random(using: &rng) ? SIGUSR1 : SIGUSR2) == 0 {
            sent += 1
        }
        usleep(UInt32.random(in: 100...3_000, using: &rng))
    }
    world.count("signals sent", sent)
}
