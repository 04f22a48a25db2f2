import CMonoClock

/// Blocking waits until an absolute deadline: the strategies' code, and the
/// timer slack lowered for the kernel's part of a wait.
extension PrecisionClock {
    /// Blocks the calling thread until this clock reaches `deadline`: the Linux
    /// counterpart of `mach_wait_until`.
    ///
    /// The wait never returns before `deadline`; the result says how late it
    /// returned. A deadline already past returns at once.
    ///
    /// - Parameters:
    ///   - deadline: an absolute instant of this clock.
    ///   - strategy: how to wait; see ``WaitStrategy``. The default learns the
    ///     smallest spin that gives sub-microsecond lateness on this machine.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` for a saturated deadline
    ///   (``Instant/max``), which would otherwise block forever: a deadline is
    ///   computed at run time, so it is checked by throwing;
    ///   ``PrecisionTimerError/system(_:operation:)`` should `clock_nanosleep` fail;
    ///   ``PrecisionTimerError/unsupportedClock(_:)`` for a sleeping strategy
    ///   (`.sleep`, `.hybrid`, `.adaptive`) on `CLOCK_MONOTONIC_RAW` (the kernel
    ///   cannot sleep on it; `.spin` works);
    ///   ``PrecisionTimerError/invalidArgument(_:)`` for a negative
    ///   ``WaitStrategy/hybrid(margin:)`` margin.
    /// The corresponding C function is `clock_nanosleep(2)` with `TIMER_ABSTIME`.
    @discardableResult
    public func wait(until deadline: Instant, strategy: WaitStrategy = .adaptive) throws -> WaitResult {
        try checkWaitable(strategy)
        guard deadline != .max else { throw PrecisionTimerError.deadlineOutOfRange }
        let target = deadline.nanoseconds
        switch strategy {
        case .spin:
            return WaitResult(deadline: deadline, woke: Instant(nanoseconds: cmc_spin_until(clockID, target)))

        case .sleep:
            let lead = SleepLead.shared.withLock { $0.lead }
            let outcome = try sleepAhead(until: target, lead: lead)
            if let oversleep = outcome.firstOversleep {
                SleepLead.shared.withLock { $0.record(oversleep) }
            }
            return WaitResult(deadline: deadline, woke: Instant(nanoseconds: outcome.woke))

        case .hybrid(let margin):
            let m = margin.saturatingNanoseconds
            let sleepTarget = target.saturatingSubtract(m)
            if cmc_now_ns(clockID) < sleepTarget {
                try withTimerSlackLowered { try sleepUntil(sleepTarget) }
            }
            return WaitResult(deadline: deadline, woke: Instant(nanoseconds: cmc_spin_until(clockID, target)))

        case .adaptive:
            let start = cmc_now_ns(clockID)
            let length = target.saturatingSubtract(start)
            let m = AdaptiveMargin.shared.withLock { $0.margin(forWaitOf: length) }
            let sleepTarget = target.saturatingSubtract(m)
            if start < sleepTarget {
                try withTimerSlackLowered { try sleepUntil(sleepTarget) }
                let oversleep = cmc_now_ns(clockID) - sleepTarget
                AdaptiveMargin.shared.withLock { $0.record(oversleep) }
            }
            return WaitResult(deadline: deadline, woke: Instant(nanoseconds: cmc_spin_until(clockID, target)))
        }
    }

    /// Blocks the calling thread for `duration` from now; see ``wait(until:strategy:)``.
    /// A zero or negative duration, however large, returns at once.
    /// - Throws: ``PrecisionTimerError/deadlineOutOfRange`` when `now + duration`
    ///   overflows (the deadline is computed at run time); and as
    ///   ``wait(until:strategy:)``.
    @discardableResult
    public func wait(for duration: Duration, strategy: WaitStrategy = .adaptive) throws -> WaitResult {
        try checkWaitable(strategy)
        guard let ns = duration <= .zero ? 0 : duration.exactInt64Nanoseconds else {
            throw PrecisionTimerError.deadlineOutOfRange
        }
        let start = cmc_now_ns(clockID)
        let (deadline, overflow) = start.addingReportingOverflow(Swift.max(0, ns))
        guard !overflow, deadline != .max else { throw PrecisionTimerError.deadlineOutOfRange }
        return try wait(until: Instant(nanoseconds: deadline), strategy: strategy)
    }

    /// The checks of a blocking wait: a sleeping strategy needs a clock the
    /// kernel can sleep on, and a hybrid margin is not negative.
    func checkWaitable(_ strategy: WaitStrategy) throws {
        switch strategy {
        case .spin:
            return
        case .sleep, .adaptive:
            try requireSleepable()
        case .hybrid(let margin):
            try requireSleepable()
            _ = try margin.checkedNotNegative("the hybrid margin")
        }
    }

    /// Throws unless the kernel can sleep on this clock (the async waits, which
    /// throw anyway, report it so).
    func requireSleepable() throws {
        guard source.canSleep else { throw PrecisionTimerError.unsupportedClock(source) }
    }

    /// What ``sleepAhead(until:lead:)`` did.
    struct SleepAheadOutcome {
        /// The clock's reading when the sleep returned: never before the target.
        var woke: Int64
        /// How late the first sleep (aimed `lead` before the target) woke after its
        /// own aim; nil when no sleep was aimed early (target too close or past).
        var firstOversleep: Int64?
        /// Sleeps that had to follow because a wake came before the target.
        var resleeps = 0
    }

    /// Kernel sleeps only, timer slack lowered: the first aimed `lead` before
    /// `target`, then, if the kernel woke the thread before `target`, sleeps aimed
    /// at `target` itself until it is reached. Never returns before `target`.
    func sleepAhead(until target: Int64, lead: Int64) throws -> SleepAheadOutcome {
        var outcome = SleepAheadOutcome(woke: cmc_now_ns(clockID))
        guard outcome.woke < target else { return outcome }
        try withTimerSlackLowered {
            let aim = target.saturatingSubtract(Swift.max(0, lead))
            if outcome.woke < aim {
                try sleepUntil(aim)
                outcome.woke = cmc_now_ns(clockID)
                outcome.firstOversleep = outcome.woke - aim
            }
            while outcome.woke < target {
                try sleepUntil(target)
                outcome.woke = cmc_now_ns(clockID)
                outcome.resleeps += 1
            }
        }
        return outcome
    }

    /// Runs `body` with the calling thread's timer slack lowered to 1 ns, so the
    /// kernel does not add its default 50 µs to a sleep, and restores the previous
    /// slack afterwards.
    func withTimerSlackLowered(_ body: () throws -> Void) rethrows {
        // Best effort: a slack that cannot be read or set leaves the sleep as it was.
        var previous: UInt64 = 0
        if case .success(let slack) = system_timer_slack_get(), slack > 1,
           case .success = system_timer_slack_set(1) {
            previous = slack
        }
        defer {
            if previous != 0 { _ = system_timer_slack_set(previous) }
        }
        try body()
    }

    /// One absolute sleep on this clock until `target` (EINTR retried with the
    /// same deadline, in `system_sleep_until`).
    /// - Throws: ``PrecisionTimerError/system(_:operation:)`` with the error
    ///   number `clock_nanosleep` returned.
    func sleepUntil(_ target: Int64) throws {
        try system_sleep_until(clockID, Swift.max(0, target)).get(operation: "clock_nanosleep")
    }
}
