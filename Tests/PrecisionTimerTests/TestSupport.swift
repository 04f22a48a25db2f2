@testable import PrecisionTimer
import Synchronization

/// A thread-safe log of what handlers saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])  // Mutex that ThreadSanitizer sees

    func append(_ element: Element) {
        items.withLock { $0.append(element) }
    }

    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}


final class DeinitFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// An object that raises a flag when it dies.
final class Owner: Sendable {
    let flag: DeinitFlag
    let ticks = Recorder<Int64>()
    init(flag: DeinitFlag) { self.flag = flag }
    deinit { flag.set() }
}

extension Duration {
    var ns: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }
}
