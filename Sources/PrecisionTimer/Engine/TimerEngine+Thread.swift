import CMonoClock
import Dispatch
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
    func earliestLocked(_ s: borrowing EngineState, now: (PrecisionClock.Source) -> Int64) -> Earliest? {
        var best: Earliest?
        for source in 0..<Self.sleepableSources where !s.queues[source].isEmpty {
            let l = s.queues[source].byLatest.top!
            guard l.latest != .max else { continue }
            let src = PrecisionClock.Source(rawValue: source)!
            let n = now(src)
            let remainingLatest = l.latest.saturatingSubtract(n)
            let remainingDeadline = s.queues[source].byDeadline.top!.deadline.saturatingSubtract(n)
            var e = best ?? Earliest(remainingLatest: .max, leeway: 0, source: src, remainingDeadline: .max,
                                     boottimePending: false, realtimePending: false)
            if remainingLatest < e.remainingLatest {
                e.remainingLatest = remainingLatest
                e.leeway = l.leeway
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
    func planLocked(_ s: inout EngineState, estimator: inout OversleepEstimator) -> WaitPlan {
        let nowMono = now(.monotonic)
        let earliest = earliestLocked(s, now: { $0 == .monotonic ? nowMono : self.now($0) })
        let inputs = WaitPlan.Inputs(
            earliest: earliest, nowMonotonic: nowMono,
            nowRealtime: earliest?.source == .realtime ? now(.realtime) : nowMono,
            learnedMargin: estimator.margin,
            spinMargin: earliest.map { estimator.margin(forWaitOf: $0.remainingLatest) } ?? 0,
            allowsSpinning: options.allowsSpinning, minimumSpinMargin: options.minimumSpinMargin,
            wallClockWatched: WallClockWatcher.shared.isActive)
        let (plan, wake) = WaitPlan.make(inputs)
        s.plannedWake = wake
        return plan
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
        cmc_swap_marker(Unmanaged.passUnretained(self).toOpaque())
        // Async code that runs here (a job of this scheduler) sleeps on it.
        cmc_set_current_scheduler(Unmanaged.passUnretained(self).toOpaque())
        defer { cmc_set_current_scheduler(nil) }
        var estimator = OversleepEstimator()
        var slack: UInt64 = 0
        _ = cmc_timer_slack_get(&slack)
        var due: [Unmanaged<TimerNode>] = []
        var batch: [Tick] = []
        var jobs: [Job] = []
        var jobOwner: (any TaskExecutor)?
        due.reserveCapacity(64)
        batch.reserveCapacity(64)
        jobs.reserveCapacity(16)
        while true {
            var plan = WaitPlan()
            let step = state.withLock { s -> Step in
                s.awake = true
                collectLocked(&s, &due, &batch)
                guard batch.isEmpty else { return .deliver }
                // Jobs run between fires: after the ticks due, before the next wait.
                if takeJobsLocked(&s, into: &jobs, owner: &jobOwner) { return .runJobs }
                // Checked after collecting (which also empties `manualFires`): a
                // collection can end the last live timer.
                if s.shutdownRequested && s.live == 0 {
                    return .exit
                }
                // The margin's recompute (a sort of 256 samples, 3 to 25 µs
                // here) only once nothing is left to do, outside the lock: not
                // between a wake and its fire, nor between a fire and the jobs
                // of the tasks it resumed.
                if estimator.isStale { return .refreshMargin }
                plan = planLocked(&s, estimator: &estimator)
                plan.doorbellValue = doorbell.value
                s.awake = false
                return .wait
            }
            switch step {
            case .exit:
                return
            case .refreshMargin:
                estimator.refresh()
                continue
            case .deliver:
                deliver(batch)
                batch.removeAll(keepingCapacity: true)
                continue
            case .runJobs:
                run(jobs, owner: jobOwner)
                jobs.removeAll(keepingCapacity: true)
                // The last reference to the scheduler may go here (its deinit
                // only asks this thread to end once it is idle).
                jobOwner = nil
                continue
            case .wait:
                break
            }
            if plan.slack != slack && cmc_timer_slack_set(plan.slack) == 0 {
                slack = plan.slack
            }
            if plan.sleepUntil == .max || cmc_now_ns(plan.clock) < plan.sleepUntil {
                var rc: Int32
                repeat {
                    // A signal (EINTR) with the doorbell unchanged leaves the plan
                    // valid (whatever changes the schedule rings the doorbell): wait
                    // again for the same absolute deadline, as swift-system's
                    // `retryOnInterrupt` does.
                    rc = doorbell.wait(expecting: plan.doorbellValue, clock: plan.clock, deadline: plan.sleepUntil)
                } while rc == EINTR && doorbell.value == plan.doorbellValue
                wakeups.add(1, ordering: .relaxed)
                guard rc == ETIMEDOUT else { continue }  // the doorbell, or a spurious wake-up: plan again
                if plan.precise {
                    estimator.record(cmc_now_ns(plan.clock) - plan.sleepUntil)
                }
            }
            if plan.spinUntil != .min {
                spin(plan, &due, &batch)
            }
        }
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
    func spin(_ plan: WaitPlan, _ due: inout [Unmanaged<TimerNode>], _ batch: inout [Tick]) {
        // A wall-clock spin may last as long as it was planned to, measured on
        // CLOCK_MONOTONIC (a monotonic spin ends at its own deadline).
        let budgetEnd = plan.source == .monotonic ? .max
            : cmc_now_ns(cmc_clock_monotonic).saturatingAdd(
                Swift.max(0, plan.spinUntil.saturatingSubtract(cmc_now_ns(plan.clock))))
        // Sleeps whose task resumes on this thread are resumed now, at the
        // spin's start: the Swift runtime's resumption, the jobs that end the
        // sleep (library code, `runSleepJobsEarly`) and the enqueueing of the
        // job that runs the caller's code happen before the deadline; that job
        // runs only after this spin has reached `spinUntil` (jobs run in
        // `threadMain`, after the spin returns, and a spin that resumed one
        // never returns early).
        var resumedEarly: [Tick] = []
        if plan.source == .monotonic {
            state.withLock { s in
                collectLocked(&s, &due, &batch, preparing: (plan.source, plan.spinUntil))
                // Looked for in small batches only: a fire of thousands of
                // same-instant timers is not a sleeping task's, and skips the scan.
                if batch.count <= 64 {
                    let resumesTaskHere = { (tick: Tick) in tick.node.handler?.resumesTaskHere == true }
                    resumedEarly = batch.filter(resumesTaskHere)
                    if !resumedEarly.isEmpty { batch.removeAll(where: resumesTaskHere) }
                }
            }
        }
        if !resumedEarly.isEmpty {
            deliver(resumedEarly)
            runSleepJobsEarly()
        }
        var seen = plan.doorbellValue
        var innerTarget = Int64.max  // on plan.clock: a timer that became the earliest
        var early: [Tick] = []
        while true {
            let n = cmc_now_ns(plan.clock)
            if n >= plan.spinUntil {
                // A timer that became the earliest during the spin and is due by
                // now (the thread was preempted past it) fires in deadline order
                // with the prepared ones, not after them.
                if !batch.isEmpty && (doorbell.value != seen || n >= innerTarget) {
                    state.withLock { s in collectLocked(&s, &due, &early) }
                    if !early.isEmpty {
                        batch = (early + batch).enumerated()
                            .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                            .map(\.element)
                    }
                }
                break
            }
            if budgetEnd != .max && cmc_now_ns(cmc_clock_monotonic) > budgetEnd { break }
            let bell = doorbell.value
            if bell != seen || n >= innerTarget {
                // Nothing prepared: plan again (unless a task was resumed early:
                // its job must not run before `spinUntil`).
                if batch.isEmpty && resumedEarly.isEmpty { return }
                seen = bell
                state.withLock { s in
                    collectLocked(&s, &due, &early)
                    innerTarget = earliestLocked(s, now: self.now).map { n.saturatingAdd($0.remainingLatest) } ?? .max
                }
                if !early.isEmpty {
                    deliver(early)
                    early.removeAll(keepingCapacity: true)
                }
                continue
            }
            cmc_cpu_relax()
        }
        if !batch.isEmpty {
            deliver(batch)
            batch.removeAll(keepingCapacity: true)
        }
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
        _ = cmc_thread_set_name(options.name)
        var setup = ThreadSetup()
        if let priority = options.realtimePriority {
            setup.realtime = system_realtime_request(Int32(priority)).map { priority }
        }
        if let cpu = options.cpu, case .failure(let errno) = system_affinity_set_cpu(Int32(cpu)) {
            setup.affinityError = errno
        }
        threadSetup.withLock { $0 = setup }
    }

    /// Asks the engine thread to end once no timer is live.
    func requestShutdown() {
        state.withLock { $0.shutdownRequested = true }
        doorbell.bumpAndWake()
    }

}
