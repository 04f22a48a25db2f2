// ModelTests' random operation sequences: the generator's draws (ModelRandom)
// and the sequences it makes of them (SequenceGenerator), in the vocabulary of
// ModelVocabulary.swift. ReferenceModel.swift states what they must do.

// MARK: - Random numbers

/// The generator's draws: SplitMix64 (tiny, seedable, good enough to drive a
/// generator) with the shapes the model asks for.
struct ModelRandom {
    private var bits: SplitMix64

    init(seed: UInt64) { bits = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { bits.next() }

    /// Uniform in 0..<n (n > 0).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// Uniform in range.
    mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        return range.lowerBound &+ Int64(bitPattern: span == 0 ? next() : next() % span)
    }

    /// True with probability `percent`/100.
    mutating func percent(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// The seed of sequence `index` of a run with `base`.
    static func sequenceSeed(base: UInt64, index: Int) -> UInt64 {
        var m = ModelRandom(seed: base ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        return m.next()
    }
}

// MARK: - Generator

enum SequenceGenerator {
    static let maxTimers = 5
    static let ms: Int64 = 1_000_000

    static func generate(seed: UInt64) -> [MOp] {
        var r = ModelRandom(seed: seed)
        var ops: [MOp] = []
        var created = 0
        let count = 5 + r.below(10)
        for i in 0..<count {
            let roll = r.below(100)
            if created < maxTimers && (i == 0 || roll < 25) {
                ops.append(.create(timer(id: created, &r)))
                created += 1
            } else if roll < 65 {
                ops.append(.advance(advanceAmount(&r)))
            } else {
                ops.append(.act(action(&r, inHandler: false, created: created)))
            }
        }
        ops.append(.advance(advanceAmount(&r)))
        return ops
    }

    static func advanceAmount(_ r: inout ModelRandom) -> Int64 {
        let roll = r.below(100)
        if roll < 20 { return 0 }
        if roll < 45 { return Int64(1 + r.below(20)) * ms }              // on the ms grid
        if roll < 75 { return r.int64(1...25 * ms) }                       // anywhere
        if roll < 96 { return r.int64(25 * ms...120 * ms) }
        return r.int64(150 * ms...600 * ms)                              // a long jump
    }

    static func interval(_ r: inout ModelRandom, burst: Bool) -> Int64 {
        let choices: [Int64] = burst ? [2, 3, 5, 7, 10, 20] : [1, 2, 3, 5, 7, 10, 20]
        var v = r.pick(choices) * ms
        if r.percent(20) { v += r.int64(1...999_999) }  // off the ms grid
        return v
    }

    /// Fractions of a second as `Duration` arithmetic makes them (`.seconds(1) / 48`
    /// is 20,833,333.333333333 ns), in attoseconds.
    static let fractions: [Int128] = [
        (Duration.seconds(1) / 48).attoseconds, (Duration.seconds(1) / 60).attoseconds,
        (Duration.seconds(1) / 144).attoseconds, (Duration.seconds(1) / 240).attoseconds,
        (Duration.milliseconds(10) / 3).attoseconds, (Duration.milliseconds(20) / 7).attoseconds,
        (Duration.seconds(1) / 7).attoseconds,
    ]

    /// A Duration of random attoseconds between `low` and `high` ns.
    static func randomAttos(_ r: inout ModelRandom, _ low: Int64, _ high: Int64) -> Int128 {
        Int128(r.int64(low...high)) * MPeriod.attosPerNs + Int128(r.int64(0...999_999_999))
    }

    /// A repeating timer's interval or a new one (G1): whole ns as before,
    /// fractions of a nanosecond, and (with `rates`) exact rates. At least 2 ms
    /// for a burst timer (it fires every tick).
    static func period(_ r: inout ModelRandom, burst: Bool, rates: Bool) -> MInterval {
        let low: Int64 = (burst ? 2 : 1) * ms
        let roll = r.below(100)
        if roll < 40 { return .ns(interval(&r, burst: burst)) }
        if roll < 52 { return .attos(r.pick(fractions)) }
        if roll < 66 || !rates { return .attos(randomAttos(&r, low, 20 * ms)) }
        if roll < 73 { return .rate(2_880, per: Duration.seconds(60).attoseconds) }       // 24 PPQN at 120 BPM
        if roll < 80 { return .rate(60_000, per: Duration.seconds(1_001).attoseconds) }   // 59.94 fps
        if roll < 86 {
            // Halves and quarters of a nanosecond: rounding ties (halves go up).
            let ns = r.int64(low...20 * ms)
            if r.percent(40) { return .attos(Int128(ns) * MPeriod.attosPerNs + 500_000_000) }
            let count = r.pick([2, 4])  // ns + 1/2 or ns + 1/4 per tick
            return .rate(count, per: (Int128(count) * Int128(ns) + 1) * MPeriod.attosPerNs)
        }
        // A random small count over a random span (whole ns, or with attoseconds).
        let count = 1 + r.below(12)
        let c = Int64(count)
        var span = Int128(r.int64(c * low...c * 20 * ms)) * MPeriod.attosPerNs
        if r.percent(50) { span += Int128(r.int64(0...999_999_999)) }
        if r.percent(10) { return .rate(count * 1_000, per: span * 1_000) }  // same period, a larger count
        return .rate(count, per: span)
    }

    /// A new interval for setInterval / setRate / tick.setInterval: rarely too
    /// large, an hour, or under a nanosecond (clamped to 1 ns).
    static func newInterval(_ r: inout ModelRandom, rates: Bool) -> MInterval {
        if r.percent(2) { return .tooLarge }
        if r.percent(10) { return .ns(3_600_000 * ms) }
        if r.percent(1) {
            return rates && r.percent(50) ? .rate(1 + r.below(5), per: Int128(r.int64(1...999_999_999)))
                : .attos(Int128(r.int64(1...999_999_999)))
        }
        return period(&r, burst: true, rates: rates)
    }

    static func timer(id: Int, _ r: inout ModelRandom) -> MTimerSpec {
        let kind: MKind
        let roll = r.below(100)
        if roll < 30 {
            let at: MDeadline = r.percent(1) ? .max : .offset(r.int64(-5 * ms...40 * ms))
            let lw: Int64 = r.percent(60) ? 0 : r.int64(0...10 * ms)
            kind = .oneShot(at: at, leeway: lw)
        } else {
            let policy = r.pick([MPolicy.skip, .skip, .burst, .delay])
            let iv: MInterval
            var start: MDeadline?
            if r.percent(1) {
                iv = .tooLarge                                     // R5: never fires
                start = nil
            } else if policy == .skip && r.percent(6) {
                // R4 material: a huge tick index (on an exact grid too).
                iv = r.pick([.ns(1 * ms), .attos(randomAttos(&r, 1 * ms, 1 * ms)),
                             .rate(3, per: Duration.milliseconds(10).attoseconds)])
                start = .offset(-3_000_000 * ms)
            } else {
                iv = period(&r, burst: policy == .burst, rates: true)
                let s = r.below(100)
                if s < 45 {
                    start = nil
                } else if s < 99 {
                    start = .offset(r.int64((policy == .burst ? -8 : -30) * ms...30 * ms))
                } else {
                    start = .max                                   // R5
                }
            }
            var lw: Int64 = 0
            if r.percent(40) {
                let cap: Int64 = iv == .tooLarge ? 10 * ms : 2 * MPeriod(iv).floorNanoseconds
                lw = r.int64(0...cap)
            }
            kind = .repeating(every: iv, start: start, leeway: lw, policy: policy)
        }
        var form = MForm.plain
        let f = r.below(100)
        if case .repeating = kind, f < 18 {
            form = .weakOwner(alsoHeld: r.percent(40))
        } else if f >= 95 {
            form = .cycleOwner
        }
        var actions: [[MAction]] = []
        for _ in 0..<4 {
            var list: [MAction] = []
            if r.percent(35) {
                for _ in 0..<(1 + r.below(2)) {
                    list.append(action(&r, inHandler: true, created: id + 1, own: id))
                }
            }
            actions.append(list)
        }
        while actions.last?.isEmpty == true { actions.removeLast() }
        return MTimerSpec(id: id, kind: kind, form: form, actions: actions)
    }

    static func action(_ r: inout ModelRandom, inHandler: Bool, created: Int, own: Int? = nil) -> MAction {
        // A target: often the handler's own timer, else any (maybe not yet made).
        func target(_ r: inout ModelRandom) -> Int {
            if let own, r.percent(45) { return own }
            return r.below(Swift.max(1, Swift.min(maxTimers, created + 1)))
        }
        if inHandler && r.percent(5) {
            // N1: the handler advances the clock, firing what falls due inside its call.
            return .advanceClock(r.percent(30) ? 0 : r.int64(1...30 * ms))
        }
        if inHandler && r.percent(20) {
            // G2: the tick's own setInterval / setNextDeadline.
            if r.percent(55) { return .tickSetInterval(newInterval(&r, rates: false)) }
            return .tickSetNextDeadline(r.percent(2) ? .max : .offset(r.int64(-10 * ms...30 * ms)))
        }
        let roll = r.below(100)
        switch roll {
        case 0..<24: return .busy(r.percent(50) ? Int64(1 + r.below(12)) * ms : r.int64(1...30 * ms))
        case 24..<32: return .cancel(target(&r))
        case 32..<46: return .suspend(target(&r))
        case 46..<58: return .resume(target(&r))
        case 58..<68: return .fire(target(&r))
        case 68..<75:
            return .setInterval(target(&r), newInterval(&r, rates: true))  // a rate is setRate
        case 75..<81:
            return .setNextDeadline(target(&r), r.percent(2) ? .max : .offset(r.int64(-10 * ms...30 * ms)))
        case 81..<90: return .releaseHandle(target(&r))
        case 90..<96: return .dropOwner(target(&r))
        default: return inHandler ? .cancelFromTick : .busy(r.int64(1...5 * ms))
        }
    }
}
