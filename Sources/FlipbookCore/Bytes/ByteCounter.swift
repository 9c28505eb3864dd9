#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A thread-safe counter of bytes read, shared by a source and the slices cut from it.
package final class ByteCounter: Sendable {
    private let value = Atomic<Int>(0)
    package func add(_ n: Int) { value.add(n, ordering: .relaxed) }
    package var total: Int { value.load(ordering: .relaxed) }
}
