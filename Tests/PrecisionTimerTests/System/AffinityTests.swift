@testable import PrecisionTimer
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CPU affinity under a restricted mask, as `taskset` or a cpuset sets one.
/// Each test runs on a helper thread whose mask it
/// restricts, so the test runner's threads keep theirs.
final class AffinityTests: XCTestCase {
    typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32

    /// `sched_getaffinity` / `sched_setaffinity`, looked up at run time: Glibc's
    /// Swift module does not declare these GNU extensions.
    static func libc(_ name: String) -> AffinityCall {
        guard let symbol = dlsym(nil, name) else { fatalError("no \(name) in libc") }
        return unsafeBitCast(symbol, to: AffinityCall.self)
    }

    /// The calling thread's affinity mask (`sched_getaffinity(0)`).
    static func currentMask() -> [Int] {
        var set = cpu_set_t()
        guard libc("sched_getaffinity")(0, MemoryLayout<cpu_set_t>.size, &set) == 0 else { return [] }
        return withUnsafeBytes(of: &set) { raw in
            (0..<(raw.count * 8)).filter { raw[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
        }
    }

    /// Sets the calling thread's affinity mask (`sched_setaffinity(0)`); returns errno or 0.
    static func setMask(_ cpus: [Int]) -> Int32 {
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { raw in
            for cpu in cpus { raw[cpu / 8] |= 1 << UInt8(cpu % 8) }
        }
        return libc("sched_setaffinity")(0, MemoryLayout<cpu_set_t>.size, &set) == 0 ? 0 : errno
    }

    /// Runs `body` on a fresh thread and returns its result.
    static func onHelperThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        guard let value = runOffTheTestThread(timeout: 60, body) else {
            fatalError("the helper thread did not finish within 60 s")
        }
        return value
    }

    static func isInvalidArgument(_ error: (any Error)?) -> Bool {
        if case .invalidArgument? = error as? PrecisionTimerError { return true }
        return false
    }

    /// What a thread restricted to one CPU saw.
    struct Observed: Sendable {
        var restrict: Int32 = -1
        var pinToOther: String = "not tried"
        var maskAfterRefusedPin: [Int] = []
        var pinToOwn: String = "not tried"
        var maskWhilePinned: [Int] = []
        var maskAfterUnpin: [Int] = []
        var maskAfterUnpinWithoutPin: [Int] = []
        var schedulerOnOther: String = "not tried"
        var schedulerOnOwn: String = "not tried"
    }

    static func describe(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "ok"
        } catch {
            return isInvalidArgument(error) ? "invalidArgument" : "\(error)"
        }
    }

    func testPinRefusesACPUOutsideTheThreadsMaskAndUnpinRestoresThatMask() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        // Keep the higher CPU, so the refused one (the lower) is one 0..<online admits.
        let own = mask[1]
        let other = mask[0]
        let seen = Self.onHelperThread { () -> Observed in
            var o = Observed()
            o.restrict = Self.setMask([own])
            o.pinToOther = Self.describe { try ThreadControls.pin(toCPU: other) }
            o.maskAfterRefusedPin = Self.currentMask()
            o.pinToOwn = Self.describe { try ThreadControls.pin(toCPU: own) }
            o.maskWhilePinned = Self.currentMask()
            _ = Self.describe { try ThreadControls.unpin() }
            o.maskAfterUnpin = Self.currentMask()
            _ = Self.describe { try ThreadControls.unpin() }
            o.maskAfterUnpinWithoutPin = Self.currentMask()
            o.schedulerOnOther = Self.describe { _ = try TimerScheduler(options: .init(cpu: other, name: "aff-other")) }
            o.schedulerOnOwn = Self.describe {
                let scheduler = try TimerScheduler(options: .init(cpu: own, name: "aff-own"))
                if let error = scheduler.threadReport.affinityError { throw error }
            }
            return o
        }
        XCTAssertEqual(seen.restrict, 0, "sched_setaffinity on the helper thread")
        XCTAssertEqual(seen.pinToOther, "invalidArgument", "pin(toCPU: \(other)) outside the mask [\(own)]")
        XCTAssertEqual(seen.maskAfterRefusedPin, [own], "a refused pin changes nothing")
        XCTAssertEqual(seen.pinToOwn, "ok")
        XCTAssertEqual(seen.maskWhilePinned, [own])
        XCTAssertEqual(seen.maskAfterUnpin, [own], "unpin escaped the thread's mask")
        XCTAssertEqual(seen.maskAfterUnpinWithoutPin, [own], "unpin without pin escaped the thread's mask")
        XCTAssertEqual(seen.schedulerOnOther, "invalidArgument",
                       "TimerScheduler(options: cpu: \(other)) outside the mask [\(own)]")
        XCTAssertEqual(seen.schedulerOnOwn, "ok")
    }

    /// Pinning again moves the pin (the allowed set is the mask from before the
    /// first pin, not the pinned one), and unpin restores that mask.
    func testRepinningMovesThePinAndUnpinRestoresTheOriginalMask() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        let seen = Self.onHelperThread { () -> [String] in
            var log: [String] = []
            log.append(Self.describe { try ThreadControls.pin(toCPU: mask[0]) })
            log.append("\(Self.currentMask())")
            log.append(Self.describe { try ThreadControls.pin(toCPU: mask[1]) })
            log.append("\(Self.currentMask())")
            log.append(Self.describe { try ThreadControls.unpin() })
            log.append("\(Self.currentMask())")
            return log
        }
        XCTAssertEqual(seen, ["ok", "\([mask[0]])", "ok", "\([mask[1]])", "ok", "\(mask)"])
    }

    /// `allowedCPUs` is the thread's mask, and stays the mask from before the pin
    /// while the thread is pinned.
    func testAllowedCPUsIsTheMaskFromBeforeThePin() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        let seen = Self.onHelperThread { () -> [[Int]] in
            var log = [ThreadControls.allowedCPUs]
            _ = Self.describe { try ThreadControls.pin(toCPU: mask[0]) }
            log.append(ThreadControls.allowedCPUs)
            _ = Self.describe { try ThreadControls.unpin() }
            _ = Self.setMask([mask[1]])
            log.append(ThreadControls.allowedCPUs)
            return log
        }
        XCTAssertEqual(seen, [mask, mask, [mask[1]]])
    }

    // MARK: - The record of the mask a pin replaced (ThreadControls, per thread)

    /// On a thread with a restricted mask: pinning twice keeps the record of the
    /// first pin, one unpin restores that mask and forgets it, and the next pin
    /// records the mask the thread has by then.
    func testPinTwiceThenUnpinRestoresTheRestrictedMaskAndTheNextPinRecordsAnew() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        let own = mask[1]
        let seen = Self.onHelperThread { () -> [String] in
            var log: [String] = ["restrict \(Self.setMask([own]))"]
            log.append(Self.describe { try ThreadControls.pin(toCPU: own) })
            log.append(Self.describe { try ThreadControls.pin(toCPU: own) })
            log.append("pinned \(Self.currentMask()) allowed \(ThreadControls.allowedCPUs)")
            log.append(Self.describe { try ThreadControls.unpin() })
            log.append("unpinned \(Self.currentMask()) record \(ThreadControls.UnpinnedMask.current.map { "\($0)" } ?? "none")")
            // Widened by other means after the unpin: nothing stale is read back.
            log.append("widen \(Self.setMask(mask))")
            log.append("allowed \(ThreadControls.allowedCPUs)")
            log.append(Self.describe { try ThreadControls.pin(toCPU: mask[0]) })
            log.append(Self.describe { try ThreadControls.unpin() })
            log.append("unpinned \(Self.currentMask())")
            return log
        }
        XCTAssertEqual(seen, [
            "restrict 0", "ok", "ok", "pinned \([own]) allowed \([own])",
            "ok", "unpinned \([own]) record none",
            "widen 0", "allowed \(mask)", "ok", "ok", "unpinned \(mask)",
        ])
    }

    /// A pin the kernel refuses (a CPU within the mask's range that is not
    /// online) changes nothing: a refused first pin leaves no record, a refused
    /// later pin keeps the thread pinned where it was, with its record.
    func testARefusedPinKeepsTheMaskAndTheRecordAsTheyWere() throws {
        let mask = Self.currentMask()
        guard let offline = (0..<1024).last(where: { !mask.contains($0) }) else {
            throw XCTSkip("every CPU id is in the mask")
        }
        let seen = Self.onHelperThread { () -> [String] in
            var log: [String] = []
            log.append("\(ThreadControls.pinRecordingMask(toCPU: offline))")
            log.append("mask \(Self.currentMask()) record \(ThreadControls.UnpinnedMask.current == nil ? "none" : "kept")")
            log.append("\(ThreadControls.pinRecordingMask(toCPU: mask[0]))")
            log.append("\(ThreadControls.pinRecordingMask(toCPU: offline))")
            log.append("mask \(Self.currentMask()) record \(ThreadControls.UnpinnedMask.current.map { "\($0)" } ?? "none")")
            log.append("\(ThreadControls.pinRecordingMask(toCPU: 1024)) \(ThreadControls.pinRecordingMask(toCPU: -1))")
            log.append(Self.describe { try ThreadControls.unpin() })
            log.append("mask \(Self.currentMask())")
            return log
        }
        let refused = "\(Result<Void, PrecisionTimerError.Errno>.failure(.invalidArgument))"
        let pinned = "\(Result<Void, PrecisionTimerError.Errno>.success(()))"
        XCTAssertEqual(seen, [
            refused, "mask \(mask) record none",
            pinned, refused, "mask \([mask[0]]) record \(mask)",
            "\(refused) \(refused)", "ok", "mask \(mask)",
        ])
    }

    /// The record belongs to the thread that pinned: a thread it starts inherits
    /// the pinned mask as its own, with no record, so its unpin does nothing.
    func testAThreadStartedByAPinnedThreadInheritsTheMaskNotTheRecord() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        let seen = Self.onHelperThread { () -> [String] in
            var log = [Self.describe { try ThreadControls.pin(toCPU: mask[0]) }]
            log += Self.onHelperThread { () -> [String] in
                var child = ["child allowed \(ThreadControls.allowedCPUs)"]
                child.append(Self.describe { try ThreadControls.unpin() })
                child.append("child mask \(Self.currentMask())")
                return child
            }
            log.append("allowed \(ThreadControls.allowedCPUs)")
            log.append(Self.describe { try ThreadControls.unpin() })
            log.append("mask \(Self.currentMask())")
            return log
        }
        XCTAssertEqual(seen, [
            "ok", "child allowed \([mask[0]])", "ok", "child mask \([mask[0]])",
            "allowed \(mask)", "ok", "mask \(mask)",
        ])
    }

    /// A scheduler's thread pinned through its options records the mask it
    /// inherited, as ``ThreadControls/pin(toCPU:)`` does: a handler on it sees
    /// that mask as its allowed CPUs.
    func testASchedulerThreadPinnedByItsOptionsRecordsTheMaskItInherited() throws {
        let mask = Self.currentMask()
        guard mask.count >= 2 else { throw XCTSkip("needs two usable CPUs (has \(mask))") }
        let scheduler = try TimerScheduler(options: .init(cpu: mask[1], name: "aff-record"))
        XCTAssertNil(scheduler.threadReport.affinityError)
        let seen = LockedValue<[[Int]]?>(nil)
        let timer = scheduler.schedule(after: .milliseconds(1)) { _ in
            seen.withLock { $0 = [Self.currentMask(), ThreadControls.allowedCPUs] }
        }
        XCTAssertTrue(waitUntil { seen.withLock { $0 } != nil })
        XCTAssertEqual(seen.withLock { $0 }, [[mask[1]], mask])
        withExtendedLifetime(timer) {}
    }
}
