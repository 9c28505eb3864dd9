import Flipbook
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A disk-cache object held open, so that a server can send its bytes with `sendfile` instead of copying
/// them through user space.
///
/// Objects are content-addressed and never written in place (a new object is a new file, renamed into
/// place), so the open descriptor reads the same bytes for as long as it lives: when the cache trims the
/// object or another process renames identical bytes over it, the inode this descriptor holds stays whole
/// until the last response using it has been sent. The descriptor closes when the last reference goes.
package final class CachedFile: Sendable {
    /// The open descriptor (read-only, close-on-exec).
    package let descriptor: Int32
    /// The object's size when it was opened.
    package let size: Int

    /// Opens the object at `path`; nil if it is gone (trimmed by another process) or not a regular file.
    /// Costs an `open` and an `fstat`.
    package init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        descriptor = fd
        size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// `length` bytes at `offset`, read with `pread` into a new buffer: for a response that cannot go out with
    /// `sendfile` (one answered through an async writer). Throws `.io` if the file reads short.
    package func read(offset: Int, length: Int, allocator: ByteBufferAllocator = ByteBufferAllocator()) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: length)
        let got = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { raw -> Int in
            var done = 0
            while done < length {
                let n = pread(descriptor, raw.baseAddress! + done, length - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { throw FlipbookError(.io, "cannot read a disk-cache object", underlying: String(cString: strerror(errno))) }
                if n == 0 { break }
                done += n
            }
            return done
        }
        guard got == length else { throw FlipbookError(.io, "a disk-cache object is shorter than its index says") }
        return buffer
    }
}
