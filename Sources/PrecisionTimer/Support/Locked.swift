import CMonoClock
import Glibc

/// A value guarded by a glibc mutex, of one of two kinds.
///
/// - ``LockKind/priorityInheriting`` (the default): a thread that holds the lock
///   runs at the priority of the highest waiter, so a realtime thread never
///   waits behind a preempted normal one. A thread that finds it taken tries
///   again in user space for a while (as the standard `Synchronization.Mutex`
///   spins, which is the same kind of lock on Linux), then sleeps in the
///   kernel; an unlock with sleeping waiters hands the lock to the first of
///   them there, and the next acquisition waits for that thread to run. Under
///   contention from more threads than cores, most acquisitions become such
///   hand-offs.
/// - ``LockKind/adaptive``: a thread that finds the lock taken tries again in
///   user space for as long as the other kind, then sleeps; an unlock wakes a
///   waiter but does not hand it the lock, so a running thread may take it
///   first, and the lock keeps moving among running threads however many
///   contend. No priority inheritance. (glibc's own adaptive spin learns its
///   length from a few tries up: with it, two threads re-arming at once would
///   sleep in the kernel at most of their collisions, and a scheduler thread
///   due to fire would sleep behind another thread's burst of re-arms.)
///
/// The lock of a scheduler's engine, and of a ``TaskRegistry`` on it, is
/// taken by many threads at a high rate (every re-arm, cancel and fire): it
/// is adaptive unless the scheduler asks for realtime priority, so that more
/// threads than cores re-arming one scheduler's timers keep the lock moving
/// instead of handing it over through the kernel at every unlock (the bench's
/// `rearm_8threads_per_s`). Every other lock is taken rarely or briefly, and
/// keeps priority inheritance for the realtime threads that may take it.
///
/// A recursive `withLock` traps, naming the call: the priority-inheriting kind
/// checks its owner in every build; the adaptive kind, which has no owner
/// check, in debug builds (where it is an error-checking mutex). The engine's
/// rules keep its lock from being taken twice (no user code runs under it).
/// ThreadSanitizer understands pthread mutexes, so the critical sections are
/// visible to it without annotations.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is reached only through `withLock`, under the
    // mutex, and comes in as `sending`.

    let kind: LockKind
    /// The mutex, and the value after it, in one allocation.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    /// How many times `withLock` looks at a taken lock again (with the CPU's
    /// pause hint between) before it sleeps.
    static var spinTries: Int { 1000 }

    init(_ initialValue: consuming sending Value, kind: LockKind = .priorityInheriting) {
        self.kind = kind
        let valueOffset = (MemoryLayout<pthread_mutex_t>.stride + MemoryLayout<Value>.alignment - 1)
            / MemoryLayout<Value>.alignment * MemoryLayout<Value>.alignment
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: valueOffset + MemoryLayout<Value>.size,
            alignment: Swift.max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
        mutex = raw.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        value = (raw + valueOffset).bindMemory(to: Value.self, capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        switch kind {
        case .priorityInheriting:
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            // glibc supports it on every Linux this package builds for.
            let set = pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
            assert(set == 0, "Locked: PTHREAD_PRIO_INHERIT refused with \(set)")
        case .adaptive:
            #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #else
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
        }
        let rc = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(rc == 0, "Locked: pthread_mutex_init failed with \(rc)")
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    @inline(__always)
    borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> Result {
        lock()
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    @inline(__always)
    private borrowing func lock() {
        // Spin on a plain read of the lock word, and try only once it is free.
        // A try fails with EBUSY on a taken lock (on a priority-inheriting
        // mutex, with EDEADLK when this thread holds it: the lock below then
        // traps; an error-checking adaptive one, in debug builds, fails that
        // try with EBUSY, and its lock below traps after the spin).
        var tries = 0
        while true {
            if cmc_mutex_is_taken(mutex) == 0 {
                let rc = pthread_mutex_trylock(mutex)
                if rc == 0 { return }
                if rc != EBUSY { break }
            }
            if tries == Self.spinTries { break }
            tries += 1
            cmc_cpu_relax()
        }
        let rc = pthread_mutex_lock(mutex)
        precondition(rc == 0, "Locked.withLock: pthread_mutex_lock failed with \(rc) (EDEADLK: a recursive lock)")
    }
}

/// The two kinds of ``Locked``.
enum LockKind: Sendable {
    case priorityInheriting
    case adaptive
}
