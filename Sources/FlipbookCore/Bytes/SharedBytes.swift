#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// One immutable allocation of bytes, shared by every `MemoryByteSource` cut from it.
package final class SharedBytes: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe.
    package let pointer: UnsafeMutableRawPointer
    package let count: Int

    package init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 16)
        if let base = bytes.baseAddress, count > 0 { pointer.copyMemory(from: base, byteCount: count) }
    }

    package init(adopting pointer: UnsafeMutableRawPointer, count: Int) {
        self.pointer = pointer
        self.count = count
    }

    deinit { pointer.deallocate() }
}
