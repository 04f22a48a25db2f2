#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts a detached POSIX thread running `body`: the scheduler threads and the
/// wall-clock watcher are plain pthreads (no Foundation `Thread`, no run loop).
/// Returns 0, or the error number of `pthread_create`.
/// The corresponding C function is `pthread_create(3)`.
@discardableResult
func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let arg = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
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
