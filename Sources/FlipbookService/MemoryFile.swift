import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A derivative's bytes in an anonymous in-memory file (Linux `memfd_create`), so that a server can send a
/// memory-cache hit with `sendfile` instead of copying it into the socket: the copy in `write` was a quarter
/// of the server's CPU per 64 KB range (`perf record` under wrk, bench/serve.sh ranges), the part nginx's
/// sendfile never pays. The memory cache makes one for each entry of at least `minimumBytes`, counts it
/// against its byte limit beside the buffer, and drops it with the entry.
///
/// Each send takes its own descriptor (`duplicate`), so a send in flight keeps the file whole after
/// eviction, and two event loops never share a `NIOFileHandle` (its use is exclusive).
public final class MemoryFile: Sendable {
    /// Entries smaller than this are copied as before: the copy costs less than the extra system calls.
    static let minimumBytes = 64 << 10

    let descriptor: Int32
    public let size: Int

    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    /// glibc's `memfd_create`, looked up once: Swift's Glibc module does not declare it. nil where missing.
    private static let memfdCreate: MemfdCreate? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "memfd_create") else { return nil }
        return unsafeBitCast(symbol, to: MemfdCreate.self)
    }()

    /// A sealed-size copy of `bytes`; nil if the system has no memfd or refuses one (out of descriptors or
    /// memory): the caller then serves the buffer as before.
    init?(_ bytes: ByteBuffer) {
        guard let create = Self.memfdCreate else { return nil }
        let fd = create("flipbook-derivative", 1)  // MFD_CLOEXEC
        guard fd >= 0 else { return nil }
        let written = bytes.withUnsafeReadableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = pwrite(fd, raw.baseAddress! + offset, raw.count - offset, off_t(offset))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard written else {
            close(fd)
            return nil
        }
        descriptor = fd
        size = bytes.readableBytes
    }

    deinit { close(descriptor) }

    /// `count` bytes from `offset` as a `FileRegion` on a descriptor of its own, and the handle to close once
    /// the write completes; nil if no descriptor is left (send the buffer instead).
    public func region(offset: Int, count: Int) -> (FileRegion, NIOFileHandle)? {
        precondition(offset >= 0 && count >= 0 && offset + count <= size, "range outside the file")
        let copy = dup(descriptor)
        guard copy >= 0 else { return nil }
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: copy)
        return (FileRegion(fileHandle: handle, readerIndex: offset, endIndex: offset + count), handle)
    }
}
