import Glibc

/// A value guarded by a glibc mutex, of one of two kinds.
///
/// - ``Kind/priorityInheriting`` (the default, and what the standard
///   `Synchronization.Mutex` always is on Linux): a thread that holds the lock
///   runs at the priority of the highest waiter, so a realtime thread never
///   waits behind a preempted normal one. The price is a hand-off: an unlock
///   with waiters gives the lock to the first of them through the kernel, and
///   the next acquisition waits for that thread to be scheduled. Under
///   contention from more threads than cores, every acquisition becomes such
///   a hand-off.
/// - ``Kind/adaptive``: a thread that finds the lock taken spins briefly, then
///   sleeps; an unlock wakes a waiter but does not hand it the lock, so a
///   running thread may take it first, and the lock keeps moving among
///   running threads however many contend. No priority inheritance.
///
/// The lock of a scheduler's engine is the one lock here that many threads
/// take at a high rate (every re-arm, cancel and fire): it is adaptive unless
/// the scheduler asks for realtime priority (re-arming one scheduler's timers
/// from 8 threads on 2 cores ran 15 to 50 times faster with it, and at 1 to
/// 4 threads as fast). Every other lock is taken rarely or briefly, and keeps
/// priority inheritance for the realtime threads that may take it.
///
/// ThreadSanitizer understands pthread mutexes, so the critical sections are
/// visible to it without annotations. Debug builds use error-checking mutexes,
/// so a recursive `withLock` traps instead of deadlocking.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is reached only through `withLock`, under the
    // mutex, and comes in as `sending`.

    enum Kind {
        case priorityInheriting
        case adaptive
    }

    let kind: Kind
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    init(_ initialValue: consuming sending Value, kind: Kind = .priorityInheriting) {
        self.kind = kind
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #else
        if kind == .adaptive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
        #endif
        if kind == .priorityInheriting {
            // glibc supports it on every Linux this package builds for.
            let set = pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
            assert(set == 0, "Locked: PTHREAD_PRIO_INHERIT refused with \(set)")
        }
        let rc = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(rc == 0, "Locked: pthread_mutex_init failed with \(rc)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> Result {
        let rc = pthread_mutex_lock(mutex)
        precondition(rc == 0, "Locked.withLock: pthread_mutex_lock failed with \(rc) (a recursive lock?)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
