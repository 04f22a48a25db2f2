import CTestSupport
import Dispatch
@testable import PrecisionTimer
import XCTest

/// ``TimerNode``'s packed storage: the state, the flags, the clock, the
/// missed-tick policy, the delivery and the scheduling sequence share words,
/// and each reads back what was set, whatever the others hold; an inline
/// one-shot's node fits the heap chunk the layout is made for.
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
                        // The sequence's whole range leaves the clock and the policy alone.
                        for sequence: UInt64 in [0, 1, 12_345, (1 << 56) - 1] {
                            n.sequence = sequence
                            XCTAssertEqual(n.sequence, sequence, label)
                            XCTAssertEqual(n.source, source, label)
                            XCTAssertEqual(n.policy, policy, label)
                        }
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
            for mask in 0..<8 {
                for state in states {
                    n.state = state
                    n.inFlight = mask & 1 != 0
                    n.recordsLateness = mask & 2 != 0
                    n.listed = mask & 4 != 0
                    XCTAssertEqual(n.state, state)
                    XCTAssertEqual(n.inFlight, mask & 1 != 0)
                    XCTAssertEqual(n.recordsLateness, mask & 2 != 0)
                    XCTAssertEqual(n.listed, mask & 4 != 0)
                    XCTAssertTrue(n.isRepeating, "the kind survives the state and the flags")
                    if case .inline = n.delivery { XCTAssertFalse(queued) } else { XCTAssertTrue(queued) }
                }
            }
        }
    }

    /// A repeating timer's grid and a queue delivery share one box: a grid
    /// that becomes a single deadline leaves the queue in place.
    func testAGridBecomingASingleDeadlineKeepsTheDeliveryQueue() {
        let queue = DispatchQueue(label: "test.node")
        let n = node(period: Period(nanoseconds: 100), delivery: .queue(queue))
        XCTAssertTrue(n.isRepeating)
        n.grid = Grid(firstDeadline: 5_000, period: .zero)
        XCTAssertFalse(n.isRepeating)
        XCTAssertEqual(n.deadline, 5_000)
        XCTAssertEqual(n.grid.nextDeadline, 5_000)
        guard case .queue(let q) = n.delivery else { return XCTFail("the delivery queue was lost") }
        XCTAssertTrue(q === queue)
        n.grid = Grid(firstDeadline: 7_000, period: Period(nanoseconds: 300))
        XCTAssertTrue(n.isRepeating)
        XCTAssertEqual(n.period, Period(nanoseconds: 300))
        XCTAssertEqual(n.deadline, 7_000)

        let inline = node(period: Period(nanoseconds: 100))
        inline.grid = Grid(firstDeadline: 9_000, period: .zero)
        XCTAssertFalse(inline.isRepeating)
        XCTAssertEqual(inline.deadline, 9_000)
        if case .queue = inline.delivery { XCTFail("an inline timer delivered on a queue") }
    }

    func testTheRunningCountCoversItsRange() {
        let n = node()
        for count: Int32 in [0, 1, 2, 65_535, 7] {
            n.runningCount = count
            XCTAssertEqual(n.runningCount, count)
            XCTAssertEqual(n.state, .idle, "the count leaves the state alone")
        }
    }
}
