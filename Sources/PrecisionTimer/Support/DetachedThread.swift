import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Test hook: when non-zero, ``startDetachedThread(blockingAsyncSignals:_:)``
/// fails with this error number instead of creating a thread.
let injectedThreadStartError = Atomic<Int32>(0)

/// Starts a detached POSIX thread running `body`: the scheduler threads and the
/// wall-clock watcher are plain pthreads (no Foundation `Thread`, no run loop).
/// With `blockingAsyncSignals`, the thread starts with every asynchronous signal
/// blocked, as libdispatch's worker threads do: a process-directed signal is
/// then delivered to another thread, and a `kill` of the process does not
/// interrupt a timer wait. (The library's waits are correct without it; this
/// only spares them needless wake-ups.) Synchronous signals, which report a
/// fault of the thread itself, stay unblocked.
/// Returns 0, or the error number of `pthread_create`.
/// The corresponding C function is `pthread_create(3)`.
@discardableResult
func startDetachedThread(blockingAsyncSignals: Bool = true, _ body: @escaping @Sendable () -> Void) -> Int32 {
    let injected = injectedThreadStartError.load(ordering: .relaxed)
    if injected != 0 { return injected }
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let arg = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    // The new thread inherits the creator's signal mask: block around the
    // create, so the thread never runs a moment with signals open.
    var saved = sigset_t()
    if blockingAsyncSignals {
        var blocked = sigset_t()
        sigfillset(&blocked)
        for fault in [SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF] {
            sigdelset(&blocked, fault)
        }
        pthread_sigmask(SIG_BLOCK, &blocked, &saved)
    }
    defer {
        if blockingAsyncSignals { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    }
    let rc = pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, arg)
    if rc == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Box>.fromOpaque(arg).release()
    }
    return rc
}
