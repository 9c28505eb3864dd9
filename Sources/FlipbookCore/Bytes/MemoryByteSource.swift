#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Bytes held in memory. Slicing shares the one underlying allocation: no copies, however many slices.
public struct MemoryByteSource: ByteSource {
    package let storage: SharedBytes
    package let range: Range<Int>
    package let counter: ByteCounter

    /// Copies `bytes` once into storage that every slice will share.
    public init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        storage = array.withUnsafeBytes { SharedBytes(copying: $0) }
        range = 0..<array.count
        counter = ByteCounter()
    }

    /// Copies the bytes of `buffer` once.
    public init(copying buffer: UnsafeRawBufferPointer) {
        storage = SharedBytes(copying: buffer)
        range = 0..<buffer.count
        counter = ByteCounter()
    }

    package init(storage: SharedBytes, range: Range<Int>, counter: ByteCounter) {
        self.storage = storage
        self.range = range
        self.counter = counter
    }

    /// The bytes this source covers.
    public var count: Int { range.count }
    /// Bytes handed out so far, by every read.
    public var bytesRead: Int { counter.total }

    /// A view of `subrange` (relative to this source) sharing the same storage and byte counter.
    public func slice(_ subrange: Range<Int>) -> MemoryByteSource {
        let lower = range.lowerBound + min(max(0, subrange.lowerBound), count)
        let upper = range.lowerBound + min(max(0, subrange.upperBound), count)
        return MemoryByteSource(storage: storage, range: lower..<max(lower, upper), counter: counter)
    }

    /// Copies bytes from `offset` into `buffer`; returns how many (fewer only at the end). Throws `io` past the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        guard offset >= 0 else { throw FlipbookError(.invalidArgument, "negative read offset \(offset)") }
        guard offset < count, buffer.count > 0, let destination = buffer.baseAddress else { return 0 }
        let n = min(buffer.count, count - offset)
        destination.copyMemory(from: storage.pointer + range.lowerBound + offset, byteCount: n)
        counter.add(n)
        return n
    }

    /// Calls `body` with the bytes in place: no copy.
    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        counter.add(count)
        return try body(UnsafeRawBufferPointer(start: storage.pointer + range.lowerBound, count: count))
    }
}
