//===----------------------------------------------------------------------===//
// The bench checks a scheduler's own statistics (TimerStatistics) against its
// own samples of the same fires: `RepeatingTimer`'s scheduler is reset before
// each measured round and its lateness histogram is merged after the round's
// timer is cancelled, so both sides cover exactly the measured fires.
//
// The two sides are two readings: the scheduler's is its own (`Tick.firedAt`,
// read just before the call), the bench's is its clock read first thing in the
// handler, so the check cannot pass by comparing a value with itself, and it
// also needs both sides to count the same fires. Both take each fire's
// lateness against its own tick's deadline. The periodic table's samples are
// against the earliest grid tick a fire serves, which for a `.skip` fire that
// missed ticks is `missed × interval` more; a few such fires would move the
// table's p99 by whole intervals while the scheduler's statistics, rightly,
// would not. For fires that missed nothing (nearly all of them) both bases
// are the same number.
//===----------------------------------------------------------------------===//
import PrecisionTimer

/// A scheduler's lateness figures beside the bench's for the same fires.
struct StatisticsCheck: Sendable, Equatable {
    /// The percentiles the check compares.
    enum Percentile: String, CaseIterable, Sendable {
        case p50, p99
    }

    /// Fires recorded, p50 and p99 lateness (ns) of one side.
    struct Figures: Sendable, Equatable {
        var samples: Int
        var p50: Int64
        var p99: Int64

        subscript(_ percentile: Percentile) -> Int64 {
            switch percentile {
            case .p50: p50
            case .p99: p99
            }
        }
    }

    /// From `TimerScheduler.statistics` (its `LatencyHistogram`, 2 significant digits).
    var scheduler: Figures
    /// From the bench's samples on the same basis (its HdrHistogram, 3 significant digits).
    var bench: Figures

    /// How far the scheduler's figure may be from the bench's: 10 % of the
    /// bench's or 200 ns, whichever is larger (200 ns covers the histograms'
    /// bucket widths where a figure is a few hundred nanoseconds).
    static func tolerance(bench: Int64) -> Double {
        Swift.max(0.1 * Double(bench.magnitude), 200)
    }

    /// How far apart the two sides' `percentile` are, ns.
    func difference(_ percentile: Percentile) -> Double {
        Double((scheduler[percentile] - bench[percentile]).magnitude)
    }

    /// Whether both sides count the same fires.
    var countsAgree: Bool { scheduler.samples == bench.samples }

    /// Whether both sides count the same fires and their `percentile` are
    /// within ``tolerance(bench:)``.
    func agrees(_ percentile: Percentile) -> Bool {
        countsAgree && difference(percentile) <= Self.tolerance(bench: bench[percentile])
    }

    /// Both percentiles agree.
    var agrees: Bool { Percentile.allCases.allSatisfy(agrees) }

    /// The line under the periodic table.
    func line(contender: String) -> String {
        func side(_ f: Figures, _ unit: String) -> String {
            "p50 \(Fmt.duration(f.p50)) p99 \(Fmt.duration(f.p99)) (\(Fmt.count(f.samples)) \(unit))"
        }
        let verdict = agrees ? "agree"
            : "DISAGREE (allowed: the same count of fires, and 10 % of the bench's figure or 200 ns, "
                + "whichever is larger)"
        return "self-check: \(contender) scheduler \(side(scheduler, "fires")) vs bench \(side(bench, "samples")), "
            + "each fire against its own tick's deadline: \(verdict)"
    }
}

/// Gathers one contender's ``StatisticsCheck`` over the measured rounds.
struct StatisticsCheckAccumulator {
    private var scheduler = LatencyHistogram()
    private var bench = LatenessAccumulator()

    /// Adds one round: the scheduler's lateness histogram (taken after the
    /// round's timer was cancelled) and the bench's samples of that round on
    /// the scheduler's basis.
    mutating func add(scheduler histogram: LatencyHistogram, bench samples: [Int64]) {
        scheduler.merge(histogram)
        for s in samples { bench.add(s, missedAbove: .max) }
    }

    var check: StatisticsCheck {
        let b = bench.summary
        return StatisticsCheck(
            scheduler: .init(samples: scheduler.count, p50: scheduler.percentile(50).benchNanoseconds,
                             p99: scheduler.percentile(99).benchNanoseconds),
            bench: .init(samples: bench.samples, p50: b.p50, p99: b.p99))
    }
}
