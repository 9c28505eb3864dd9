#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Random access to a sequence of bytes: a size and reads at an offset. Implementations are thread-safe;
/// decoders take one and never learn whether the bytes live in memory or in a file.
public protocol ByteSource: Sendable {
    /// Total size in bytes.
    var count: Int { get }

    /// Copies up to `buffer.count` bytes starting at `offset` into `buffer` and returns how many were
    /// copied: fewer only at the end of the source, 0 at or past the end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int

    /// Calls `body` with all bytes in one contiguous buffer. In-memory sources pass their storage (no copy);
    /// file sources read the whole file once (one allocation of `count` bytes).
    func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R

    /// Bytes handed out so far by `read` and `withContiguousBytes`, summed over every caller.
    var bytesRead: Int { get }
}

extension ByteSource {
    /// Reads `length` bytes at `offset` (fewer at the end of the source) into a new array.
    public func bytes(at offset: Int, length: Int) throws -> [UInt8] {
        let wanted = max(0, min(length, count - offset))
        guard wanted > 0 else { return [] }
        var result = [UInt8](repeating: 0, count: wanted)
        let got = try result.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        if got < wanted { result.removeLast(wanted - got) }
        return result
    }
}
