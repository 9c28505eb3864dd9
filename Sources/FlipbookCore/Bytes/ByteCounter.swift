#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A thread-safe counter of bytes read, shared by a source and the slices cut from it.
final class ByteCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int) { value.add(n, ordering: .relaxed) }
    var total: Int { value.load(ordering: .relaxed) }
}
