#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A file read by offset with `pread`; nothing is loaded until asked for. The descriptor closes when the
/// last copy of the source goes away.
public struct FileByteSource: ByteSource {
    package final class Descriptor: Sendable {
        package let fd: Int32
        package init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    package let descriptor: Descriptor
    package let counter = ByteCounter()
    /// The file's size when it was opened.
    public let count: Int
    /// The path it was opened from.
    public let path: String

    /// Opens `path` read-only. Throws `.io` if it cannot be opened or is not a regular file.
    ///
    /// Opened non-blocking, checked, and only then switched to blocking reads: a plain `open` of a FIFO waits
    /// for a writer that may never come (`mkfifo x.gif; flipbook thumb x.gif` hung), and opening some device
    /// files has side effects; neither is ever read.
    public init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
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
            throw FlipbookError(.io, "\(path) is not a regular file (\(Self.kind(of: info.st_mode)))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        descriptor = Descriptor(fd)
        count = Int(info.st_size)
        self.path = path
    }

    /// Takes `fd` (open for reading, a regular file) as the source, `name` for messages; it closes with the
    /// source. For files made here and unlinked at once (a spooled copy of a remote object).
    package init(adopting fd: Int32, name: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw FlipbookError(.io, "cannot stat \(name)", underlying: why)
        }
        descriptor = Descriptor(fd)
        count = Int(info.st_size)
        path = name
    }

    /// What a file that is not a regular one is, for the error message.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "not a file"
        }
    }

    /// Bytes handed out so far, by every read.
    public var bytesRead: Int { counter.total }

    /// Reads with `pread` from `offset` into `buffer`; returns how many bytes (fewer only at the end of the file).
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

    /// Calls `body` with the whole file's bytes (read once into memory for the call).
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
