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

/// A thread-safe counter of bytes read, shared by a source and the slices cut from it.
final class ByteCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int) { value.add(n, ordering: .relaxed) }
    var total: Int { value.load(ordering: .relaxed) }
}

/// One immutable allocation of bytes, shared by every `MemoryByteSource` cut from it.
final class SharedBytes: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe.
    let pointer: UnsafeMutableRawPointer
    let count: Int

    init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 16)
        if let base = bytes.baseAddress, count > 0 { pointer.copyMemory(from: base, byteCount: count) }
    }

    init(adopting pointer: UnsafeMutableRawPointer, count: Int) {
        self.pointer = pointer
        self.count = count
    }

    deinit { pointer.deallocate() }
}

/// Bytes held in memory. Slicing shares the one underlying allocation: no copies, however many slices.
public struct MemoryByteSource: ByteSource {
    let storage: SharedBytes
    let range: Range<Int>
    let counter: ByteCounter

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

    init(storage: SharedBytes, range: Range<Int>, counter: ByteCounter) {
        self.storage = storage
        self.range = range
        self.counter = counter
    }

    public var count: Int { range.count }
    public var bytesRead: Int { counter.total }

    /// A view of `subrange` (relative to this source) sharing the same storage and byte counter.
    public func slice(_ subrange: Range<Int>) -> MemoryByteSource {
        let lower = range.lowerBound + min(max(0, subrange.lowerBound), count)
        let upper = range.lowerBound + min(max(0, subrange.upperBound), count)
        return MemoryByteSource(storage: storage, range: lower..<max(lower, upper), counter: counter)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        guard offset >= 0 else { throw FlipbookError(.invalidArgument, "negative read offset \(offset)") }
        guard offset < count, buffer.count > 0, let destination = buffer.baseAddress else { return 0 }
        let n = min(buffer.count, count - offset)
        destination.copyMemory(from: storage.pointer + range.lowerBound + offset, byteCount: n)
        counter.add(n)
        return n
    }

    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        counter.add(count)
        return try body(UnsafeRawBufferPointer(start: storage.pointer + range.lowerBound, count: count))
    }
}

/// A file read by offset with `pread`; nothing is loaded until asked for. The descriptor closes when the
/// last copy of the source goes away.
public struct FileByteSource: ByteSource {
    final class Descriptor: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    let descriptor: Descriptor
    let counter = ByteCounter()
    public let count: Int
    /// The path it was opened from.
    public let path: String

    /// Opens `path` read-only. Throws `.io` if it cannot be opened or is not a regular file.
    public init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw FlipbookError(.io, "cannot open \(path)", underlying: String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw FlipbookError(.io, "cannot stat \(path)", underlying: why)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FlipbookError(.io, "\(path) is not a regular file")
        }
        descriptor = Descriptor(fd)
        count = Int(info.st_size)
        self.path = path
    }

    public var bytesRead: Int { counter.total }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        guard offset >= 0 else { throw FlipbookError(.invalidArgument, "negative read offset \(offset)") }
        guard offset < count, buffer.count > 0, let base = buffer.baseAddress else { return 0 }
        let wanted = min(buffer.count, count - offset)
        var done = 0
        while done < wanted {
            let n = pread(descriptor.fd, base + done, wanted - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw FlipbookError(.io, "cannot read \(path)", underlying: String(cString: strerror(errno)))
            }
            if n == 0 { break }  // the file shrank under us
            done += n
        }
        counter.add(done)
        return done
    }

    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        // An anonymous mapping populated in one call: a multi-megabyte file would otherwise take one page
        // fault per 4 KiB as pread fills a malloc'd buffer (~5% of a 24 MP thumbnail). Reading with pread,
        // rather than mapping the file itself, means a file truncated under us cannot raise SIGBUS.
        let length = max(1, count)
        #if canImport(Glibc)
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE
        #else
        let flags = MAP_PRIVATE | MAP_ANON
        #endif
        guard let mapping = mmap(nil, length, PROT_READ | PROT_WRITE, flags, -1, 0), mapping != MAP_FAILED else {
            throw FlipbookError(.io, "cannot allocate \(length) bytes to read \(path)", underlying: String(cString: strerror(errno)))
        }
        defer { munmap(mapping, length) }
        let buffer = UnsafeMutableRawBufferPointer(start: mapping, count: count)
        let n = try read(into: buffer, at: 0)
        return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    }
}
