@testable import PrecisionTimer
import Synchronization
import XCTest

// The one-shot recipes of the catalog, verbatim between the markers, compiled
// and run so they stay true: the idle timeout of *Migrating*
// (Sources/PrecisionTimer/PrecisionTimer.docc/Migrating.md) and the session of
// *Timers that cannot leak* (TimersThatCannotLeak.md). Both store their own
// one-shot, hold themselves weakly through the `owner:` form, and move the
// timer in place with `reschedule(after:)`.

// --- Migrating: idle timeout begins ---
/// Closes itself after 30 s without a read.
final class Connection: Sendable {
    private let idle = Mutex<OneShotTimer?>(nil)
    private let open = Atomic<Bool>(true)

    init(scheduler: TimerScheduler = .shared) {
        let timer = scheduler.schedule(after: .seconds(30), owner: self) { owner, _ in
            owner.close()                                     // `owner` is self, held weakly
        }
        idle.withLock { $0 = timer }
    }

    var isOpen: Bool { open.load(ordering: .relaxed) }

    func didRead() {
        idle.withLock { $0?.reschedule(after: .seconds(30)) }  // the same timer, moved
    }

    func close() {
        open.store(false, ordering: .relaxed)
        idle.withLock { $0?.cancel() }                         // a later didRead() does nothing
    }
}
// --- Migrating: idle timeout ends ---

// --- TimersThatCannotLeak: session begins ---
final class Session: Sendable {
    private let expiry = Mutex<OneShotTimer?>(nil)

    init() {
        let timer = TimerScheduler.shared.schedule(after: .seconds(15 * 60), owner: self) { owner, _ in
            owner.expire()                // `owner` is self, passed in; not captured
        }
        expiry.withLock { $0 = timer }
    }

    func touch() {
        expiry.withLock { $0?.reschedule(after: .seconds(15 * 60)) }   // the same timer, moved
    }

    private func expire() { print("session expired") }
}
// --- TimersThatCannotLeak: session ends ---

final class DocsOneShotSnippetTests: XCTestCase {
    /// Each read pushes the timeout back, in place; 30 s without one closes the
    /// connection, at exactly 30 s after the last read; a read after the close
    /// does nothing; releasing the connection releases it and its timer.
    func testTheIdleTimeoutIsPushedBackByEachReadAndClosesAfterThirtyIdleSeconds() {
        let (scheduler, clock) = makeScheduler()
        var connection: Connection? = Connection(scheduler: scheduler)
        weak let released = connection
        let nodes = TimerNode.instancesIfCounted
        for _ in 0..<10 {
            clock.advance(by: .seconds(20))
            connection!.didRead()
        }
        XCTAssertTrue(connection!.isOpen, "200 s of reads 20 s apart: never idle for 30 s")
        XCTAssertEqual(TimerNode.instancesIfCounted, nodes, "no new timer per read")
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        clock.advance(by: .seconds(30) - .nanoseconds(1))
        XCTAssertTrue(connection!.isOpen, "never early")
        clock.advance(by: .nanoseconds(1))
        XCTAssertFalse(connection!.isOpen, "closed 30 s after the last read")
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        connection!.didRead()
        clock.advance(by: .seconds(60))
        XCTAssertEqual(scheduler.statistics.liveTimers, 0, "a read after the close arms nothing")
        XCTAssertEqual(scheduler.statistics.fires, 1)
        connection = nil
        XCTAssertNil(released, "the timer does not keep its owner alive")
    }

    /// A connection released while its timeout is pending takes its timer
    /// with it: no cycle through the handler, and nothing left live.
    func testReleasingAnOpenConnectionCancelsItsTimeout() {
        let (scheduler, clock) = makeScheduler()
        var connection: Connection? = Connection(scheduler: scheduler)
        weak let released = connection
        connection!.didRead()
        XCTAssertEqual(scheduler.statistics.liveTimers, 1)
        connection = nil
        XCTAssertNil(released)
        XCTAssertEqual(scheduler.statistics.liveTimers, 0)
        clock.advance(by: .seconds(60))
        XCTAssertEqual(scheduler.statistics.fires, 0)
    }

    /// The session's timer holds it weakly: releasing the session releases it
    /// (and so its stored timer, which cancels it), touched or not.
    func testASessionIsReleasedWithItsTimer() {
        var session: Session? = Session()
        weak let released = session
        session!.touch()
        session!.touch()
        session = nil
        XCTAssertNil(released, "the session's own timer does not keep it alive")
    }
}
