import CTestSupport
import Dispatch
@testable import PrecisionTimer
import TestSupport
import XCTest

/// ``TimerNode``'s packed storage: the state and the flags share a byte, the
/// clock, the missed-tick policy, the kind and the delivery another that
/// never changes, and each reads back what was set, whatever the others
/// hold; an inline one-shot's node fits the heap chunk the layout is made
/// for. Handler calls past the first are counted in the engine.
final class TimerNodeTests: XCTestCase {
    let scheduler = TimerScheduler(clock: VirtualClock())
    var engine: TimerEngine { scheduler.engine }

    func node(source: PrecisionClock.Source = .monotonic, period: Period = .zero, policy: MissedTickPolicy = .skip,
              delivery: TimerDelivery = .inline) -> TimerNode {
        TimerNode(engine: engine, source: source, deadline: 1_000, period: period, leeway: 0, policy: policy,
                  delivery: delivery, handler: .plain { _ in })
    }

    /// 104 bytes with the object's header: glibc's 112-byte chunk, whose
    /// usable size is 104.
    func testAnInlineOneShotsNodeFitsA112ByteChunk() {
        let n = node()
        let usable = ct_malloc_usable_size(Unmanaged.passUnretained(n).toOpaque())
        XCTAssertLessThanOrEqual(usable, 104, "a node's heap chunk grew")
    }

    func testEveryClockPolicyDeliveryAndKindReadsBack() {
        let queue = DispatchQueue(label: "test.node")
        for source in [PrecisionClock.Source.monotonic, .boottime, .realtime, .monotonicRaw] {
            for policy in [MissedTickPolicy.skip, .burst, .delay] {
                for queued in [false, true] {
                    for period in [Period.zero, Period(nanoseconds: 250)] {
                        let label = "\(source) \(policy) queued \(queued) period \(period)"
                        let n = node(source: source, period: period, policy: policy,
                                     delivery: queued ? .queue(queue) : .inline)
                        XCTAssertEqual(n.source, source, label)
                        XCTAssertEqual(n.policy, policy, label)
                        XCTAssertEqual(n.isRepeating, !period.isZero, label)
                        XCTAssertEqual(n.period, period, label)
                        XCTAssertEqual(n.deadline, 1_000, label)
                        if case .queue(let q) = n.delivery {
                            XCTAssertTrue(queued, label)
                            XCTAssertTrue(q === queue, label)
                        } else {
                            XCTAssertFalse(queued, label)
                        }
                        n.sequence = .max
                        n.state = .cancelled
                        n.isRunning = true
                        XCTAssertEqual(n.source, source, label)
                        XCTAssertEqual(n.policy, policy, label)
                        XCTAssertEqual(n.isRepeating, !period.isZero, label)
                    }
                }
            }
        }
    }

    func testTheStateAndEachFlagAreIndependent() {
        let states: [TimerNode.State] = [.idle, .scheduled, .suspended, .collected, .done, .cancelled]
        for queued in [false, true] {
            let n = node(period: Period(nanoseconds: 100),
                         delivery: queued ? .queue(DispatchQueue(label: "test.node")) : .inline)
            for mask in 0..<16 {
                for state in states {
                    n.state = state
                    n.inFlight = mask & 1 != 0
                    n.recordsLateness = mask & 2 != 0
                    n.listed = mask & 4 != 0
                    n.isRunning = mask & 8 != 0
                    XCTAssertEqual(n.state, state)
                    XCTAssertEqual(n.inFlight, mask & 1 != 0)
                    XCTAssertEqual(n.recordsLateness, mask & 2 != 0)
                    XCTAssertEqual(n.listed, mask & 4 != 0)
                    XCTAssertEqual(n.isRunning, mask & 8 != 0)
                    XCTAssertTrue(n.isRepeating, "the kind survives the state and the flags")
                    if case .inline = n.delivery { XCTAssertFalse(queued) } else { XCTAssertTrue(queued) }
                }
            }
        }
    }

    /// A repeating timer's grid lives in its box, beside a delivery queue.
    func testARepeatingTimersGridMovesWithTheDeliveryQueueInPlace() {
        let queue = DispatchQueue(label: "test.node")
        let n = node(period: Period(nanoseconds: 100), delivery: .queue(queue))
        n.grid = Grid(firstDeadline: 7_000, period: Period(nanoseconds: 300))
        XCTAssertTrue(n.isRepeating)
        XCTAssertEqual(n.period, Period(nanoseconds: 300))
        XCTAssertEqual(n.deadline, 7_000)
        XCTAssertEqual(n.grid.nextDeadline, 7_000)
        guard case .queue(let q) = n.delivery else { return XCTFail("the delivery queue was lost") }
        XCTAssertTrue(q === queue)
        let oneShot = node(delivery: .queue(queue))
        oneShot.grid = Grid(firstDeadline: 9_000, period: .zero)
        XCTAssertFalse(oneShot.isRepeating)
        XCTAssertEqual(oneShot.deadline, 9_000)
        XCTAssertEqual(oneShot.grid.nextDeadline, 9_000)
    }

    /// The first running call sets the node's flag; the others are counted in
    /// the engine, and the flag clears only when the last has ended.
    func testCallsPastTheFirstAreCountedInTheEngine() {
        let n = node()
        engine.state.withLock { s in
            for _ in 0..<3 { engine.beginCallLocked(&s, n) }
            XCTAssertTrue(n.isRunning)
            XCTAssertEqual(s.extraCalls[ObjectIdentifier(n)], 2)
            engine.endCallLocked(&s, n)
            engine.endCallLocked(&s, n)
            XCTAssertTrue(n.isRunning, "one call still runs")
            XCTAssertNil(s.extraCalls[ObjectIdentifier(n)])
            engine.endCallLocked(&s, n)
            XCTAssertFalse(n.isRunning)
        }
    }

    /// A handler that advances its virtual clock runs the same repeating
    /// timer again inside its own call, nested: every call is counted, and a
    /// cancel from the innermost one leaves nothing counted once they end.
    func testNestedCallsOfOneTimerAreCountedAndEnd() {
        let clock = VirtualClock()
        let scheduler = TimerScheduler(clock: clock)
        let depth = LockedValue(0)
        let deepest = LockedValue(0)
        let counted = LockedValue<[Int]>([])
        let holder = LockedValue<RepeatingTimer?>(nil)
        let timer = scheduler.repeating(every: .milliseconds(1)) { _ in
            let d = depth.withLock { $0 += 1; return $0 }
            deepest.withLock { $0 = max($0, d) }
            if let node = holder.withLock({ $0 })?.node {
                let (running, extra) = scheduler.engine.state.withLock { s in
                    (node.isRunning, s.extraCalls[ObjectIdentifier(node)] ?? 0)
                }
                counted.withLock { $0.append(running ? 1 + extra : 0) }
            }
            if d < 5 {
                clock.advance(by: .milliseconds(1))
            } else {
                holder.withLock { $0 }?.cancel()
            }
            depth.withLock { $0 -= 1 }
        }
        holder.withLock { $0 = timer }
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(deepest.withLock { $0 }, 5, "nested calls of the one timer")
        XCTAssertEqual(counted.withLock { $0 }, [1, 2, 3, 4, 5], "the calls running, counted in each")
        XCTAssertTrue(timer.isCancelled)
        scheduler.engine.state.withLock { s in
            XCTAssertFalse(timer.node.isRunning)
            XCTAssertTrue(s.extraCalls.isEmpty)
        }
        holder.withLock { $0 = nil }
    }
}
