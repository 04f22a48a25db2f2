import CMonoClock
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The scheduler thread: planning the next wait from the queues, sleeping on
/// the doorbell, spinning the last stretch, and the loop that ties them.
extension TimerEngine {

    /// What the engine thread does next, decided under the lock.
    enum Step {
        case deliver, runJobs, refreshMargin, wait, exit
    }

    /// The one computation of "when must the engine be awake next", for the real
    /// thread's plan, its spin and virtual time alike. `now` reads a clock.
    /// With `includesWheel`, a wheel slot about to come up counts as a timer
    /// (the thread wakes to take it out); virtual time settles the wheels
    /// first instead (see ``nextWake()``).
    func earliestLocked(_ s: borrowing EngineState, now: (PrecisionClock.Source) -> Int64,
                        includesWheel: Bool = true) -> Earliest? {
        var best: Earliest?
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            // Called on the element in place: a copy of the queue would retain
            // and release its arrays on every plan.
            guard let held = includesWheel ? s.queues[source].earliest() : s.queues[source].earliestHeld()
            else { continue }
            let src = PrecisionClock.Source(rawValue: source)!
            let n = now(src)
            let remainingLatest = held.latest.saturatingSubtract(n)
            let remainingDeadline = held.deadline.saturatingSubtract(n)
            var e = best ?? Earliest(remainingLatest: .max, leeway: 0, source: src, remainingDeadline: .max,
                                     boottimePending: false, realtimePending: false)
            if remainingLatest < e.remainingLatest {
                e.remainingLatest = remainingLatest
                e.leeway = held.leeway
                e.source = src
            }
            e.remainingDeadline = Swift.min(e.remainingDeadline, remainingDeadline)
            e.boottimePending = e.boottimePending || src == .boottime
            e.realtimePending = e.realtimePending || src == .realtime
            best = e
        }
        return best
    }

    /// Works out the next wait from the queues (see ``WaitPlan/make(_:)``, the
    /// pure part) and records when the thread will wake, so that a timer that
    /// becomes more urgent rings the doorbell.
    func planLocked(_ s: inout EngineState, estimator: inout OversleepEstimator,
                    spinStartWork: Int64 = 0) -> WaitPlan {
        let nowMono = now(.monotonic)
        let earliest = earliestLocked(s, now: { $0 == .monotonic ? nowMono : self.now($0) })
        let inputs = WaitPlan.Inputs(
            earliest: earliest, nowMonotonic: nowMono,
            nowRealtime: earliest?.source == .realtime ? now(.realtime) : nowMono,
            learnedMargin: estimator.margin,
            spinMargin: earliest.map { estimator.margin(forWaitOf: $0.remainingLatest) } ?? 0,
            spinStartWork: spinStartWork,
            allowsSpinning: options.allowsSpinning, minimumSpinMargin: options.minimumSpinMargin,
            wallClockWatched: WallClockWatcher.shared.isActive)
        let (plan, wake) = WaitPlan.make(inputs)
        s.plannedWake = wake
        return plan
    }

    /// What the engine thread keeps from one pass of its loop to the next:
    /// touched by that thread only, never under the lock's protection.
    struct ThreadLoop {
        var estimator = OversleepEstimator()
        /// The thread's timer slack as last set.
        var slack: UInt64 = 0
        var due: [Unmanaged<TimerNode>] = []
        /// Ticks collected and not yet delivered.
        var batch: [Tick] = []
        var jobs: [Job] = []
        var jobOwner: (any TaskExecutor)?
        /// The monotonic reading that ended the last spin at its deadline.
        var spinEndedAt: Int64 = 0
        /// What resuming sleeps early at a spin's start took lately.
        var earlyResumes = EarlyResumeCost()
        /// The monotonic reading that timed the last inline handler call, for
        /// the next collection's "now" (nil: read the clock).
        var lastReading: Int64?
        /// A batch was delivered since jobs last had their turn.
        var delivered = false
        /// The end of a spin that resumed sleeps early, from which the thread
        /// records their lateness once nothing is due (nil: none to record).
        var earlyResumesEndedAt: Int64?

        init() {
            due.reserveCapacity(64)
            batch.reserveCapacity(64)
            jobs.reserveCapacity(16)
        }
    }

    /// The engine thread's body: collect, deliver, run queued jobs, plan, wait;
    /// until shut down with no live timers and no jobs.
    ///
    /// A wait that ends early (the doorbell, a signal, a spurious wake-up) only
    /// leads to a new plan: the thread spins only after a sleep that reached its
    /// end, and never longer than the spin margin it planned.
    func threadMain() {
        // Marks this thread as a scheduler thread for its whole life: nothing
        // that runs on it may wait for a handler call (see `mayWaitForHandlers`).
        cmc_swap_no_wait_marker(Unmanaged.passUnretained(self).toOpaque())
        // Async code that runs here (a job of this scheduler) sleeps on it.
        cmc_set_current_scheduler(Unmanaged.passUnretained(self).toOpaque())
        defer { cmc_set_current_scheduler(nil) }
        var loop = ThreadLoop()
        if case .success(let slack) = system_timer_slack_get() { loop.slack = slack }
        while true {
            var plan = WaitPlan()
            switch state.withLock({ s in nextStepLocked(&s, &loop, plan: &plan) }) {
            case .exit:
                return
            case .refreshMargin:
                loop.estimator.refresh()
            case .deliver:
                loop.lastReading = deliver(&loop.batch)
                loop.batch.removeAll(keepingCapacity: true)
                loop.delivered = true
            case .runJobs:
                runJobs(loop.jobs, owner: loop.jobOwner)
                loop.jobs.removeAll(keepingCapacity: true)
                // The last reference to the scheduler may go here (its deinit
                // only asks this thread to end once it is idle).
                loop.jobOwner = nil
            case .wait:
                guard sleep(plan, &loop) else { continue }
                if plan.spinUntil != .min { spin(plan, &loop) }
            }
        }
    }

    /// Decides the thread's next step, in this order: run the jobs queued by
    /// the end of the batch just delivered, deliver what is due, run the jobs
    /// queued by then, end (shut down and idle), refresh the margin, or plan a
    /// wait (into `plan`, clearing `awake` so a more urgent timer rings the
    /// doorbell).
    func nextStepLocked(_ s: inout EngineState, _ loop: inout ThreadLoop, plan: inout WaitPlan) -> Step {
        s.awake = true
        // Jobs run between batches even when every collection finds a tick
        // due (handlers that overrun their period): else they would wait for
        // the timers to fall idle, which may be never.
        if loop.delivered {
            loop.delivered = false
            if takeJobsLocked(&s, into: &loop.jobs, owner: &loop.jobOwner) {
                loop.lastReading = nil  // the jobs take time: read the clock after them
                return .runJobs
            }
        }
        collectLocked(&s, &loop.due, &loop.batch, monotonicNow: loop.lastReading, limit: Self.collectionLimit)
        loop.lastReading = nil
        assertInvariantsLocked(&s)
        guard loop.batch.isEmpty else { return .deliver }
        // Jobs run between fires: after the ticks due, before the next wait.
        if takeJobsLocked(&s, into: &loop.jobs, owner: &loop.jobOwner) { return .runJobs }
        // The lateness of sleeps a spin resumed early, once their tasks' jobs
        // have run: recording it does not delay those tasks.
        if let spinEnd = loop.earlyResumesEndedAt {
            loop.earlyResumesEndedAt = nil
            recordEarlyResumesLocked(&s, spinEndedAt: spinEnd)
        }
        // Checked after collecting (which also empties `manualFires`).
        if s.shutdownRequested && s.live == 0 { return .exit }
        // The margin's recompute (a sort of 256 samples) only once nothing is
        // left to do, outside the lock: not between a wake and its fire, nor
        // between a fire and the jobs of the tasks it resumed.
        if loop.estimator.isStale { return .refreshMargin }
        plan = planLocked(&s, estimator: &loop.estimator, spinStartWork: loop.earlyResumes.work)
        plan.doorbellValue = doorbell.value
        s.awake = false
        return .wait
    }

    /// Sleeps on the doorbell to `plan.sleepUntil` with the plan's timer slack.
    /// Returns true when the sleep reached its end (the thread goes on to the
    /// spin, if one is planned), false when the doorbell or a spurious wake-up
    /// ended it (the thread plans again). A signal with the doorbell unchanged
    /// leaves the plan valid (whatever changes the schedule rings the
    /// doorbell): it waits again for the same absolute deadline, as
    /// swift-system's `retryOnInterrupt` does.
    func sleep(_ plan: WaitPlan, _ loop: inout ThreadLoop) -> Bool {
        if plan.slack != loop.slack, case .success = system_timer_slack_set(plan.slack) {
            loop.slack = plan.slack
        }
        guard plan.sleepUntil == .max || cmc_now_ns(plan.clock) < plan.sleepUntil else { return true }
        var rc: Int32
        repeat {
            rc = doorbell.wait(expecting: plan.doorbellValue, clock: plan.clock, deadline: plan.sleepUntil)
        } while rc == EINTR && doorbell.value == plan.doorbellValue
        wakeups.add(1, ordering: .relaxed)
        guard rc == ETIMEDOUT else { return false }
        if plan.precise {
            loop.estimator.record(cmc_now_ns(plan.clock) - plan.sleepUntil)
        }
        return true
    }

    /// Spins to `plan.spinUntil`, then delivers what is due there.
    ///
    /// On CLOCK_MONOTONIC the fire is prepared first (collected as if it were
    /// already the deadline), so that at the deadline only the handler calls are
    /// left; its ticks are delivered after the spin, never early. The doorbell
    /// stays armed meanwhile (`awake` is false and `plannedWake` is the spin's
    /// end), so a timer that becomes the earliest rings it: the spin then serves
    /// that timer at its own deadline and goes on. A wall-clock spin is not
    /// prepared and gives up after the spin's length on CLOCK_MONOTONIC, so a
    /// backward step of the wall clock leads to a new plan, not a long spin.
    func spin(_ plan: WaitPlan, _ loop: inout ThreadLoop) {
        let earlyResumeStart = prepareFire(plan, &loop)
        let spinStart = cmc_now_ns(cmc_clock_monotonic)
        loop.earlyResumes.spinStarted(resumedEarly: earlyResumeStart != nil,
                                      took: spinStart &- (earlyResumeStart ?? spinStart))
        let reached = spinToDeadline(plan, &loop, holdsResumedTask: earlyResumeStart != nil)
        // The spin's end: its last reading on a monotonic plan (no read between
        // the deadline and the handlers), else a reading now.
        let spinEnd = plan.source == .monotonic && reached ? loop.spinEndedAt : cmc_now_ns(cmc_clock_monotonic)
        if reached && !loop.batch.isEmpty {
            loop.lastReading = deliver(&loop.batch)
            loop.batch.removeAll(keepingCapacity: true)
            loop.delivered = true
        }
        // The sleeps resumed at the spin's start: their lateness is recorded
        // once the thread has nothing due (under the lock it takes anyway),
        // not on the way to the handlers due at the deadline or to the jobs
        // of those sleeps.
        if earlyResumeStart != nil { loop.earlyResumesEndedAt = spinEnd }
        spinNanoseconds.add(UInt64(Swift.max(0, spinEnd &- spinStart)), ordering: .relaxed)
    }

    /// Collects the fire at a monotonic `plan.spinUntil` ahead of it, and
    /// resumes now the sleeps whose task resumes on this thread (see
    /// `TimerEngine+EarlyResume.swift`). Returns the CLOCK_MONOTONIC reading
    /// at which resuming them began, nil when none was resumed.
    func prepareFire(_ plan: WaitPlan, _ loop: inout ThreadLoop) -> Int64? {
        guard plan.source == .monotonic else { return nil }
        var resumedEarly = state.withLock { s -> [Tick] in
            collectLocked(&s, &loop.due, &loop.batch, preparing: (plan.source, plan.spinUntil),
                          limit: Self.collectionLimit)
            return takeResumedEarly(from: &loop.batch)
        }
        guard !resumedEarly.isEmpty else { return nil }
        let start = cmc_now_ns(cmc_clock_monotonic)
        deliver(&resumedEarly)
        runSleepJobsEarly()
        return start
    }

    /// Spins until `plan.spinUntil`, serving a timer that becomes the earliest
    /// meanwhile (the doorbell) at its own deadline. Returns false when the
    /// spin is dropped for a new plan: the doorbell rang and nothing was
    /// prepared (and no task was resumed early: its job must not run before
    /// `spinUntil`). A wall-clock spin ends after its planned length measured
    /// on CLOCK_MONOTONIC, so a backward step of the wall clock cannot keep it
    /// spinning.
    ///
    /// A timer collected during the spin is called at once only when it is due
    /// before every prepared tick of its clock. Any other waits for the spin's
    /// end and joins the prepared ticks in deadline order, after them on equal
    /// deadlines: it was queued after the prepared ticks of its deadline (the
    /// rest of a same-instant batch past the collection limit, taken because
    /// the clock passed the instant while the lock was taken; a timer
    /// scheduled at a prepared instant during the spin). A repeating timer
    /// whose tick is collected during the spin stays off its queue until that
    /// tick has been delivered or dropped (`parks`), so its next tick is never
    /// collected ahead of it, whatever deadline it was moved to meanwhile.
    func spinToDeadline(_ plan: WaitPlan, _ loop: inout ThreadLoop, holdsResumedTask: Bool) -> Bool {
        let budgetEnd = plan.source == .monotonic ? .max
            : cmc_now_ns(cmc_clock_monotonic).saturatingAdd(
                Swift.max(0, plan.spinUntil.saturatingSubtract(cmc_now_ns(plan.clock))))
        var seen = plan.doorbellValue
        var innerTarget = Int64.max  // on plan.clock: a timer that became the earliest
        var early: [Tick] = []
        var held: [Tick] = []  // collected during the spin, called after the prepared ones
        var preparedFrom: [Int64]?  // their earliest deadline per clock, once something is collected
        while true {
            let n = cmc_now_ns(plan.clock)
            let ended = n >= plan.spinUntil
            if ended {
                loop.spinEndedAt = n
                // A timer that became the earliest during the spin and is due by
                // now (the thread was preempted past it) fires in deadline order
                // with the prepared ones, not after them.
                if !loop.batch.isEmpty && (doorbell.value != seen || n >= innerTarget) {
                    state.withLock { s in
                        collectLocked(&s, &loop.due, &held, parks: true, limit: Self.collectionLimit)
                    }
                }
            }
            if ended || (budgetEnd != .max && cmc_now_ns(cmc_clock_monotonic) > budgetEnd) {
                if !held.isEmpty {
                    loop.batch = Self.inDeadlineOrder(prepared: loop.batch, collectedAfter: held) {
                        $0.deadline.nanoseconds
                    }
                }
                return true
            }
            let bell = doorbell.value
            if bell != seen || n >= innerTarget {
                if loop.batch.isEmpty && !holdsResumedTask { return false }
                seen = bell
                state.withLock { s in
                    collectLocked(&s, &loop.due, &early, parks: true, limit: Self.collectionLimit)
                    innerTarget = earliestLocked(s, now: self.now).map { n.saturatingAdd($0.remainingLatest) } ?? .max
                }
                if !early.isEmpty {
                    if !loop.batch.isEmpty {
                        let earliest = preparedFrom ?? Self.earliestDeadlines(of: loop.batch)
                        preparedFrom = earliest
                        let waits = { (tick: Tick) in
                            Self.waitsForPrepared(deadline: tick.deadline.nanoseconds, of: tick.node.source,
                                                  isManual: tick.isManual, preparedFrom: earliest)
                        }
                        held.append(contentsOf: early.filter(waits))
                        early.removeAll(where: waits)
                    }
                    deliver(&early)
                    early.removeAll(keepingCapacity: true)
                }
                continue
            }
            cmc_cpu_relax()
        }
    }

    /// The earliest deadline among `batch`'s ticks of each clock (indexed by
    /// the clock's raw value; `Int64.max`: none). A fire by hand has none.
    static func earliestDeadlines(of batch: [Tick]) -> [Int64] {
        var earliest = [Int64](repeating: .max, count: PrecisionClock.Source.allCases.count)
        for tick in batch where !tick.isManual {
            let source = tick.node.source.rawValue
            earliest[source] = Swift.min(earliest[source], tick.deadline.nanoseconds)
        }
        return earliest
    }

    /// Whether a tick collected during a spin (due at `deadline` of `source`)
    /// must wait for the prepared ticks, whose earliest deadlines per clock
    /// are `preparedFrom`: it is due at or after its clock's. A fire by hand
    /// never waits.
    static func waitsForPrepared(deadline: Int64, of source: PrecisionClock.Source, isManual: Bool,
                                 preparedFrom: [Int64]) -> Bool {
        !isManual && deadline >= preparedFrom[source.rawValue]
    }

    /// The ticks prepared ahead of a spin and those collected at its end, as
    /// one batch in deadline order. On equal deadlines the prepared ones come
    /// first, each list in its own order: a collection takes timers in
    /// (deadline, place in the scheduling order) order and a timer takes its
    /// place when it is queued, so a timer collected after the preparation
    /// with a prepared one's deadline was queued after it (the rest of a
    /// same-instant batch past the collection limit, or a timer scheduled
    /// during the spin).
    static func inDeadlineOrder<Element>(prepared: [Element], collectedAfter later: [Element],
                                         deadline: (Element) -> Int64) -> [Element] {
        (prepared + later).enumerated()
            .sorted { (deadline($0.element), $0.offset) < (deadline($1.element), $1.offset) }
            .map(\.element)
    }

    /// Starts the engine's thread and waits until it has applied its options.
    /// Returns 0 or the error number of `pthread_create`.
    func startThread() -> Int32 {
        let ready = DispatchSemaphore(value: 0)
        let rc = startDetachedThread(blockingAsyncSignals: options.blocksAsyncSignals) { [self] in
            setUpThread()
            ready.signal()
            threadMain()
        }
        if rc == 0 { ready.wait() }
        return rc
    }

    /// Applies the options to the calling (engine) thread and records the
    /// outcome: a realtime priority or a CPU the system refuses is not an
    /// error (the thread works without it), so it is recorded, not thrown.
    func setUpThread() {
        threadID.store(cmc_thread_id(), ordering: .releasing)
        _ = system_thread_set_name(options.name)
        var setup = ThreadSetup()
        if let priority = options.realtimePriority {
            setup.realtime = system_realtime_request(Int32(priority)).map { priority }
        }
        if let cpu = options.cpu, case .failure(let errno) = ThreadControls.pinRecordingMask(toCPU: cpu) {
            setup.affinityError = errno
        }
        // A realtime thread preempts every fair one anyway; the slice is the
        // fair scheduler's.
        let isRealtime = if case .success? = setup.realtime { true } else { false }
        if let slice = options.timeSlice, slice > 0, !isRealtime,
           case .failure(let errno) = system_thread_slice_set(UInt64(slice)) {
            setup.timeSliceError = errno
        }
        if case .success(let ns) = system_thread_slice_get(), ns > 0 { setup.timeSlice = Int64(clamping: ns) }
        threadSetup.withLock { $0 = setup }
        if let priority = options.realtimePriority, case .failure(let errno)? = setup.realtime {
            options.logger.debug("realtime priority refused; the scheduler thread runs at normal priority",
                                 metadata: ["scheduler": "\(options.name)", "priority": "\(priority)",
                                            "error": "\(errno)"])
        }
        if let slice = options.timeSlice, let errno = setup.timeSliceError {
            options.logger.debug("time slice refused; the scheduler thread keeps the kernel's default",
                                 metadata: ["scheduler": "\(options.name)", "slice_ns": "\(slice)",
                                            "error": "\(errno)"])
        }
        if let cpu = options.cpu, let errno = setup.affinityError {
            options.logger.debug("could not pin the scheduler thread to its CPU",
                                 metadata: ["scheduler": "\(options.name)", "cpu": "\(cpu)", "error": "\(errno)"])
        }
    }

    /// Asks the engine thread to end once no timer is live.
    func requestShutdown() {
        state.withLock { $0.shutdownRequested = true }
        doorbell.ring()
    }

}
