import Synchronization

/// A frame-paced callback: the Linux counterpart of `CADisplayLink`, on the timer
/// engine.
///
/// Frames lie on a drift-free grid: frame `k` is due at `start + k × duration`,
/// where `duration` is the exact frame period (`1 s / fps`, or `span / frames`
/// for a rational rate such as 60,000 frames per 1,001 s), and each frame's time
/// is rounded once to the nearest nanosecond, as a timer's ticks are
/// (``TimerScheduler/repeating(ticks:per:startingAt:clock:leeway:policy:delivery:recordsLateness:_:)``). When the
/// callback overruns a frame, the link drops frames and stays on its grid, as a
/// display link skips vsyncs; ``Frame/dropped`` says how many.
///
/// Lifecycle is the engine's: releasing the link invalidates it; ``invalidate()``
/// is synchronous; ``isPaused`` suspends and resumes (frames missed while paused
/// are reported as dropped on the next callback, whose ``Frame/isFirstAfterResume``
/// is set).
public final class FrameLink: Sendable {
    /// One frame, as the callback receives it.
    public struct Frame: Sendable {
        /// The frame's scheduled time (on its grid).
        public let timestamp: PrecisionClock.Instant
        /// The next frame's scheduled time.
        public let targetTimestamp: PrecisionClock.Instant
        /// The frame period.
        public let duration: Duration
        /// The frame's index on the grid.
        public let index: Int
        /// Frames dropped since the previous callback.
        public let dropped: Int
        /// When the callback was called.
        public let firedAt: PrecisionClock.Instant
        /// True for the first frame delivered after the link was paused and
        /// resumed (``isPaused`` set to `true`, then `false`), whose ``dropped``
        /// counts the frames the pause skipped; false for every other frame. The
        /// link's very first frame is false, unless the link was paused and
        /// resumed before it came (then it, too, follows a resume). Several
        /// pauses between two frames make one such frame. A pause that caught a
        /// frame already due but not yet delivered drops that frame: the first
        /// frame after the resume is still the one flagged.
        public let isFirstAfterResume: Bool
    }

    /// The rate a link runs at: exactly ``frames`` per ``span``.
    public struct Rate: Sendable, Hashable, CustomStringConvertible {
        /// Frames per ``span``.
        public let frames: Int
        /// The duration ``frames`` frames take.
        public let span: Duration

        /// `frames` per `span`, as the link runs it: a period under 1 ns is
        /// clamped to 1 ns (one frame per nanosecond), as a timer's is.
        init(frames: Int, per span: Duration) {
            if span.attoseconds < Int128(frames) * 1_000_000_000 {
                (self.frames, self.span) = (1, .nanoseconds(1))
            } else {
                (self.frames, self.span) = (frames, span)
            }
        }

        /// The rate of an exact period: `denominator` frames per
        /// `whole × denominator + remainder` nanoseconds.
        init(_ period: Period) {
            let ns = Int128(period.whole) * Int128(period.denominator) + Int128(period.remainder)
            self.init(frames: Int(period.denominator), per: Duration(attoseconds: ns * 1_000_000_000))
        }

        /// Frames per second, as a `Double` (59.94005994005994 for 60,000 per
        /// 1,001 s).
        public var framesPerSecond: Double {
            Double(frames) / (Double(span.attoseconds) / 1e18)
        }

        /// The duration of one frame, to the attosecond.
        public var frameDuration: Duration { span / frames }

        /// "60000 frames per 1001.0 seconds (59.94005994005994 fps)".
        public var description: String {
            "\(frames) frames per \(span) (\(framesPerSecond) fps)"
        }
    }

    /// The link's timer (internal for tests).
    let timer: RepeatingTimer
    /// The rate the link runs at and the whole number of frames per second
    /// reported for it. Its lock is also held while the timer's interval
    /// changes, so they change together (lock order: this lock, then the
    /// engine's; the engine never calls back into the link holding its lock).
    private let rates: Locked<(preferred: Int, rate: Rate)>

    /// The frame rate as a whole number of frames per second: the one asked for,
    /// or, for a rational rate, the nearest (at least 1). ``rate`` is exact.
    public var preferredFramesPerSecond: Int { rates.withLock { $0.preferred } }

    /// The rate the link runs at, exactly: `rate.frames` per `rate.span`, and
    /// ``Rate/framesPerSecond`` as a `Double`.
    public var rate: Rate { rates.withLock { $0.rate } }

    private init(preferred: Int, rate: Rate, _ makeTimer: (Resumes) -> RepeatingTimer) {
        self.rates = Locked((preferred, rate))
        self.timer = makeTimer(Resumes())
    }

    /// The whole frames per second reported for `rate`: the nearest, at
    /// least 1, saturating (a `Double` past `Int`'s range never traps).
    static func nearestWholeRate(_ rate: Rate) -> Int {
        let fps = rate.framesPerSecond.rounded()
        guard fps < 9.2e18 else { return .max }
        return Swift.max(1, Int(fps))
    }

    /// Tells the frames that follow a resume from the others. Each pause bumps
    /// the timer's suspend epoch, which every tick carries, and the engine never
    /// delivers a tick collected before a pause (its epoch is stale); so a
    /// frame follows a resume exactly when its epoch differs from the previous
    /// frame's (from the timer's first epoch, 0, for the first frame). Handler
    /// calls of one timer never overlap, so the atomic only publishes the last
    /// epoch from one call to the next.
    final class Resumes: Sendable {
        private let lastEpoch = Atomic<UInt32>(0)

        /// The frame of `tick`, and remembers its epoch.
        func frame(_ tick: Tick) -> Frame {
            // A manual fire (FrameLink offers none) neither is nor consumes one.
            guard !tick.isManual else { return FrameLink.frame(tick, isFirstAfterResume: false) }
            let previous = lastEpoch.exchange(tick.epoch, ordering: .acquiringAndReleasing)
            return FrameLink.frame(tick, isFirstAfterResume: tick.epoch != previous)
        }
    }

    /// A link calling `callback` `preferredFramesPerSecond` times a second.
    ///
    /// - Parameters:
    ///   - preferredFramesPerSecond: 1 … 1,000,000.
    ///   - scheduler: the engine (default the shared one; give a render loop its own).
    ///   - clock: the clock of the frame grid.
    ///   - delivery: inline (lowest jitter) or a dispatch queue.
    ///   - callback: called once per frame with its ``Frame``. Do not capture the
    ///     link strongly in it (that would keep it alive); use the `owner:` form.
    /// - Precondition: `preferredFramesPerSecond` in 1 … 1,000,000; `clock` is
    ///   not `monotonicRaw`.
    public convenience init(preferredFramesPerSecond: Int, scheduler: TimerScheduler = .shared,
                            clock: PrecisionClock = .monotonic, delivery: TimerDelivery = .inline,
                            _ callback: @escaping @Sendable (Frame) -> Void) {
        Self.requireRate(preferredFramesPerSecond, "preferredFramesPerSecond", #function)
        clock.requireSleepablePrecondition(#function)
        self.init(preferred: preferredFramesPerSecond,
                  rate: Rate(frames: preferredFramesPerSecond, per: .seconds(1))) { resumes in
            scheduler.repeating(ticks: preferredFramesPerSecond, per: .seconds(1), clock: clock, policy: .skip,
                                delivery: delivery) {
                callback(resumes.frame($0))
            }
        }
    }

    /// A link at an exact rational rate: `frames` per `span` — 60,000 per 1,001 s
    /// is NTSC's 59.94 fps, 24,000 per 1,001 s is 23.976 fps. Frame `k` is due at
    /// `start + k × span / frames`, exactly, rounded once to the nanosecond.
    ///
    /// - Parameters:
    ///   - frames: frames per `span`, 1 … 9,223,372,036.
    ///   - span: the duration those frames take; positive.
    ///   - scheduler: the engine (default the shared one).
    ///   - clock: the clock of the frame grid.
    ///   - delivery: inline (lowest jitter) or a dispatch queue.
    ///   - callback: called once per frame with its ``Frame``.
    /// - Precondition: `frames` in 1 … 9,223,372,036 and `span` positive; `clock`
    ///   is not `monotonicRaw`.
    public convenience init(frames: Int, per span: Duration, scheduler: TimerScheduler = .shared,
                            clock: PrecisionClock = .monotonic, delivery: TimerDelivery = .inline,
                            _ callback: @escaping @Sendable (Frame) -> Void) {
        _ = TimerInterval.period(ticks: frames, per: span, #function)
        clock.requireSleepablePrecondition(#function)
        let rate = Rate(frames: frames, per: span)
        self.init(preferred: Self.nearestWholeRate(rate), rate: rate) { resumes in
            scheduler.repeating(ticks: frames, per: span, clock: clock, policy: .skip, delivery: delivery) {
                callback(resumes.frame($0))
            }
        }
    }

    /// A link at `baseRate / frameInterval` frames a second: `CADisplayLink`'s
    /// older `frameInterval` divisor of the display rate. The period is
    /// `frameInterval` base periods exactly.
    ///
    /// - Parameters:
    ///   - baseRate: the display rate being divided, 1 … 1,000,000. Default 60.
    ///   - frameInterval: base frames per callback: 2 at 60 Hz calls back 30 times
    ///     a second. ``preferredFramesPerSecond`` reports `baseRate / frameInterval`
    ///     (at least 1).
    ///   - scheduler: the engine (default the shared one).
    ///   - clock: the clock of the frame grid.
    ///   - delivery: inline (lowest jitter) or a dispatch queue.
    ///   - callback: called once per frame with its ``Frame``.
    /// A period past the clock's range means "never": the first frame is due one
    /// period after the start, so no frame comes.
    /// - Precondition: `baseRate` in 1 … 1,000,000 and `frameInterval` positive;
    ///   `clock` is not `monotonicRaw`.
    public convenience init(baseRate: Int = 60, frameInterval: Int, scheduler: TimerScheduler = .shared,
                            clock: PrecisionClock = .monotonic, delivery: TimerDelivery = .inline,
                            _ callback: @escaping @Sendable (Frame) -> Void) {
        requirePrecondition(frameInterval > 0, #function, "frameInterval must be positive (got \(frameInterval))")
        Self.requireRate(baseRate, "baseRate", #function)
        clock.requireSleepablePrecondition(#function)
        self.init(preferred: Swift.max(1, baseRate / frameInterval),
                  rate: Rate(frames: baseRate, per: .seconds(frameInterval))) { resumes in
            scheduler.repeating(ticks: baseRate, per: .seconds(frameInterval), clock: clock, policy: .skip,
                                delivery: delivery) {
                callback(resumes.frame($0))
            }
        }
    }

    /// A link at a checked rate (one read at run time: a frame rate from a
    /// configuration): `try TimerInterval(ticks: fps, per: .seconds(1))`. It
    /// cannot trap on the rate.
    ///
    /// - Parameters:
    ///   - interval: the frame period.
    ///   - scheduler: the engine (default the shared one).
    ///   - clock: the clock of the frame grid.
    ///   - delivery: inline (lowest jitter) or a dispatch queue.
    ///   - callback: called once per frame with its ``Frame``.
    /// - Precondition: `clock` is not `monotonicRaw`.
    public convenience init(every interval: TimerInterval, scheduler: TimerScheduler = .shared,
                            clock: PrecisionClock = .monotonic, delivery: TimerDelivery = .inline,
                            _ callback: @escaping @Sendable (Frame) -> Void) {
        clock.requireSleepablePrecondition(#function)
        let period = interval.period
        let rate = Rate(period)
        self.init(preferred: Self.nearestWholeRate(rate), rate: rate) { resumes in
            scheduler.startRepeating(period: period, first: scheduler.defaultStart(period: period, clock: clock),
                                     clock: clock, leeway: .zero, policy: .skip, delivery: delivery,
                                     .plain { callback(resumes.frame($0)) })
        }
    }

    /// A link that holds `owner` weakly, passes it to the callback, and
    /// invalidates itself at the first frame after the owner is gone.
    ///
    /// - Parameters:
    ///   - preferredFramesPerSecond: 1 … 1,000,000.
    ///   - owner: the object the callback works on; held weakly. Store the link
    ///     in it, so releasing the owner releases (and invalidates) the link.
    ///   - scheduler: the engine (default the shared one).
    ///   - clock: the clock of the frame grid.
    ///   - delivery: inline (lowest jitter) or a dispatch queue.
    ///   - callback: called once per frame with the owner and the ``Frame``.
    /// - Precondition: as ``init(preferredFramesPerSecond:scheduler:clock:delivery:_:)``.
    public convenience init<Owner: AnyObject & Sendable>(
        preferredFramesPerSecond: Int, owner: Owner, scheduler: TimerScheduler = .shared,
        clock: PrecisionClock = .monotonic, delivery: TimerDelivery = .inline,
        _ callback: @escaping @Sendable (Owner, Frame) -> Void
    ) {
        Self.requireRate(preferredFramesPerSecond, "preferredFramesPerSecond", #function)
        clock.requireSleepablePrecondition(#function)
        let period = TimerInterval.period(ticks: preferredFramesPerSecond, per: .seconds(1), #function)
        self.init(preferred: preferredFramesPerSecond,
                  rate: Rate(frames: preferredFramesPerSecond, per: .seconds(1))) { resumes in
            scheduler.repeating(period: period, first: scheduler.defaultStart(period: period, clock: clock),
                                clock: clock, policy: .skip, delivery: delivery, owner: owner) { owner, tick in
                callback(owner, resumes.frame(tick))
            }
        }
    }

    /// Pauses (`true`) or resumes (`false`) the link; idempotent. On resume,
    /// if frames fell due while paused, the latest of them comes at once (the
    /// others are counted in its ``Frame/dropped``); the first frame after the
    /// resume has ``Frame/isFirstAfterResume`` set. After ``invalidate()`` setting it does nothing and it reads `false`.
    public var isPaused: Bool {
        get { timer.isSuspended }
        set {
            if newValue { timer.suspend() } else { timer.resume() }
        }
    }

    /// True once invalidated (or its owner died).
    public var isInvalidated: Bool { timer.isCancelled }

    /// Changes the rate while running: the pending frame keeps its time, later
    /// frames follow the new period. After ``invalidate()`` it does nothing:
    /// ``preferredFramesPerSecond`` keeps the rate the link last ran at. Safe
    /// from any thread: the rate and the period change together, so after
    /// concurrent calls ``preferredFramesPerSecond`` is the rate the link runs at.
    /// - Precondition: `fps` in 1 … 1,000,000 (also after ``invalidate()``).
    public func setPreferredFramesPerSecond(_ fps: Int) {
        Self.requireRate(fps, "fps", #function)
        rates.withLock { rates in
            timer.setRate(ticks: fps, per: .seconds(1))
            if !timer.isCancelled { rates = (fps, Rate(frames: fps, per: .seconds(1))) }
        }
    }

    /// Changes the rate to a checked one (a frame rate read at run time:
    /// `try TimerInterval(ticks: fps, per: .seconds(1))`), as
    /// ``setPreferredFramesPerSecond(_:)`` does; it cannot trap on the rate.
    /// ``preferredFramesPerSecond`` then reads the nearest whole rate.
    public func setFrameInterval(_ interval: TimerInterval) {
        let rate = Rate(interval.period)
        rates.withLock { rates in
            timer.setInterval(interval)
            if !timer.isCancelled { rates = (Self.nearestWholeRate(rate), rate) }
        }
    }

    /// Stops the link for good. Synchronous: when it returns (on another thread),
    /// the callback is not running and will not run again. Calling it again does
    /// nothing.
    public func invalidate() {
        timer.cancel()
    }

    /// A frames-per-second rate outside 1 … 1,000,000 is a precondition failure
    /// naming `function`.
    static func requireRate(_ fps: Int, _ name: String, _ function: StaticString) {
        requirePrecondition(fps >= 1 && fps <= 1_000_000, function,
                            "\(name) must be in 1...1000000 frames per second (got \(fps))")
    }

    /// The frame of `tick`, whose period is the timer's interval when the tick
    /// was collected: after a rate change, the period the frames now run at.
    static func frame(_ tick: Tick, isFirstAfterResume: Bool) -> Frame {
        let period = tick.period.duration
        let next = tick.nextDeadline == .max || tick.isManual ? tick.deadline + period
            : PrecisionClock.Instant(nanoseconds: tick.nextDeadline)
        return Frame(timestamp: tick.deadline, targetTimestamp: next,
                     duration: period, index: Int(tick.index), dropped: Int(tick.missed), firedAt: tick.firedAt,
                     isFirstAfterResume: isFirstAfterResume)
    }
}
