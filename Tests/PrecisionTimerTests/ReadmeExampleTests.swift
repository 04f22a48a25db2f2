import Foundation
import PrecisionTimer
import Synchronization
import XCTest

// The Swift snippets of README.md's tour, each between a pair of
// `--- README example begins/ends ---` markers, compiled and run here so they
// stay true. `testTheReadmeShowsExactlyTheseSnippets` checks that the README's
// tour shows each of them verbatim (less this file's indentation), and
// nothing else. Real time on a shared machine: what must hold exactly
// (never early, counts, exact virtual instants) is asserted exactly, lateness
// bounds are generous.

// --- README example begins ---
final class Peer: Sendable {
    private let timeout: Duration
    private let idle = Mutex<OneShotTimer?>(nil)
    init(idleTimeout: Duration = .seconds(30), scheduler: TimerScheduler = .shared) {
        timeout = idleTimeout
        let timer = scheduler.schedule(after: idleTimeout, owner: self) { conn, _ in conn.close() }
        idle.withLock { $0 = timer }
    }
    func didRead() { idle.withLock { $0?.reschedule(after: timeout) } }  // in place: no new timer
    func close() { idle.withLock { $0 = nil } }  // releasing the timer cancels it, even in its handler
    var isOpen: Bool { idle.withLock { $0 != nil } }
}
// --- README example ends ---

/// The tour's actor, in a namespace of its own (the *Time in async code*
/// article's snippets have an actor of the same name).
enum ReadmeTour {
    // --- README example begins ---
    actor ControlLoop {
        let scheduler: TimerScheduler  // the actor's executor; keep it (the reference is unowned)
        nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
        init() throws { scheduler = try TimerScheduler(options: .init(priority: .realtime(80))) }
        func run(every period: Duration, cycles: Int) async throws {
            var deadline = PrecisionClock.monotonic.now
            for _ in 0..<cycles {
                deadline += period                                         // an absolute grid: no drift
                try await PrecisionClock.monotonic.sleep(until: deadline)  // resumes on `scheduler`
                // read the inputs, compute, write the outputs
            }
        }
    }
    // --- README example ends ---
}

final class ReadmeExampleTests: XCTestCase {
    func testReadmeExample() async throws {
        // --- README example begins ---
        let clock = PrecisionClock()               // CLOCK_MONOTONIC; .boottime and .realtime too
        let start = clock.now                      // one vDSO read: Int64 nanoseconds
        let elapsed: Duration = clock.now - start  // instants and durations are different types
        // --- README example ends ---
        XCTAssertGreaterThanOrEqual(elapsed, .zero)

        // --- README example begins ---
        var deadline = clock.now
        for _ in 0..<100 {
            deadline += .milliseconds(1)                  // an absolute grid: late work does not drift it
            let result = try clock.wait(until: deadline)  // sleeps, then spins a margin learned here
            if result.lateness > .microseconds(50) { print("late by \(result.lateness.readable)") }
        }
        // --- README example ends ---
        XCTAssertGreaterThanOrEqual(clock.now, deadline, "a wait returned early")
        XCTAssertGreaterThanOrEqual(clock.now - start, .milliseconds(100))
        // The shared scheduler's figures so far (other tests use it too).
        let before = TimerScheduler.shared.statistics.clock(.monotonic)

        // --- README example begins ---
        let timer = TimerScheduler.shared.repeating(every: .milliseconds(1)) { tick in
            // tick k is due at exactly start + k × 1 ms, however late tick k − 1 ran
            if tick.missed > 0 { print("missed \(tick.missed) ticks") }
            if tick.index >= 99 { tick.cancelTimer() }    // or release `timer`
        }
        // --- README example ends ---
        // 100 ticks take 100 ms; allow a slow machine (or a sanitizer) far more.
        let end = ContinuousClock.now + .seconds(30)
        while !timer.isCancelled && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertTrue(timer.isCancelled)

        // --- README example begins ---
        let lateness = TimerScheduler.shared.statistics.clock(.monotonic).lateness  // every fire, recorded
        print("p50 \(lateness.percentile(50).readable), p99 \(lateness.percentile(99).readable), max \(lateness.max.readable)")
        // --- README example ends ---
        // The 100 grid ticks above each fired or were reported missed (a skip
        // timer fires once for a run of late ticks), and every fire is recorded.
        let after = TimerScheduler.shared.statistics.clock(.monotonic)
        XCTAssertGreaterThanOrEqual((after.fires - before.fires) + (after.missedTicks - before.missedTicks), 100)
        XCTAssertGreaterThanOrEqual(lateness.count - before.lateness.count, 1, "the fires above were recorded")
    }

    func testAnIdleConnectionClosesThirtySecondsAfterItsLastRead() {
        // --- README example begins ---
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)        // no thread: timers fire inside advance(by:)
        let connection = Peer(scheduler: scheduler)
        clock.advance(by: .seconds(20))
        connection.didRead()                                // the timeout moves to 50 s
        clock.advance(by: .seconds(30) - .nanoseconds(1))
        XCTAssertTrue(connection.isOpen)                    // not a nanosecond early
        clock.advance(by: .nanoseconds(1))
        XCTAssertFalse(connection.isOpen)                   // closed at exactly 50 s
        // --- README example ends ---
        XCTAssertEqual(scheduler.statistics.fires, 1)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
    }

    /// The tour's idle timeout on the real shared scheduler: reads push it
    /// back, and it closes the connection once they stop.
    func testTheIdleTimeoutOnTheSharedScheduler() async throws {
        let connection = Peer(idleTimeout: .seconds(2))
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(20))
            connection.didRead()
        }
        XCTAssertTrue(connection.isOpen, "closed although reads kept coming")
        let end = ContinuousClock.now + .seconds(30)
        while connection.isOpen && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertFalse(connection.isOpen)
    }

    /// A connection released while its timeout is pending: the timer held it
    /// weakly, so it goes, and its timer with it.
    func testAReleasedConnectionTakesItsTimerWithIt() {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        weak var weakConnection: Peer?
        do {
            let connection = Peer(scheduler: scheduler)
            weakConnection = connection
            XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        }
        XCTAssertNil(weakConnection)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        clock.advance(by: .seconds(60))
        XCTAssertEqual(scheduler.statistics.fires, 0)
    }

    func testTheControlLoop() async throws {
        let t0 = PrecisionClock.monotonic.now
        try await ReadmeTour.ControlLoop().run(every: .milliseconds(1), cycles: 100)
        // 100 periods on the grid: never sooner than the last deadline.
        XCTAssertGreaterThanOrEqual(PrecisionClock.monotonic.now - t0, .milliseconds(100))

        let loop = try ReadmeTour.ControlLoop()
        try await loop.run(every: .milliseconds(1), cycles: 50)
        XCTAssertGreaterThan(loop.scheduler.statistics.fires, 0)
        XCTAssertLessThanOrEqual(loop.scheduler.statistics.fires, 50)
    }

    /// README.md's tour shows the snippets of this file, verbatim, and no other.
    func testTheReadmeShowsExactlyTheseSnippets() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)

        // The README's tour: from its heading to the next `## ` heading.
        let lines = readme.components(separatedBy: "\n")
        let tourStart = try XCTUnwrap(lines.firstIndex(of: "## A short tour"), "README.md has no tour")
        let tourEnd = lines[(tourStart + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        var shown: [String] = []
        var block: [String]?
        for line in lines[tourStart..<tourEnd] {
            if block == nil, line == "```swift" {
                block = []
            } else if block != nil, line == "```" {
                shown.append(block!.joined(separator: "\n"))
                block = nil
            } else {
                block?.append(line)
            }
        }

        // This file's snippets, less their common indentation.
        var compiled: [String] = []
        var snippet: [String]?
        for line in source.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// --- README example begins ---" {
                snippet = []
            } else if trimmed == "// --- README example ends ---" {
                let body = snippet ?? []
                let indent = body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    .map { $0.prefix { $0 == " " }.count }.min() ?? 0
                compiled.append(body.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
                    .joined(separator: "\n"))
                snippet = nil
            } else {
                snippet?.append(line)
            }
        }

        XCTAssertEqual(shown.count, compiled.count, "the tour shows \(shown.count) snippets, this file has \(compiled.count)")
        for snippet in compiled {
            XCTAssertTrue(shown.contains(snippet), "README.md's tour does not show this snippet verbatim:\n\(snippet)")
        }
        for block in shown {
            XCTAssertTrue(compiled.contains(block), "README.md's tour shows a snippet this file does not compile:\n\(block)")
        }
    }
}
