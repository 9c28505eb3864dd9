import FlipbookCore
#if canImport(Glibc)
import Glibc
#endif

/// A remote source copied once, front to back, into a file of its own that nobody else can see (created and
/// unlinked at once in the temporary folder), for work that reads all of it, more than once, or out of order
/// (ingest hashes every byte and then decodes): one pass over the network instead of a ranged refetch per
/// reading, and the disk, not memory, holds it. The file goes when the source does.
package enum SpooledCopy {
    /// Copies `source` (at most `maxBytes`) in chunks of `chunk` bytes into an unlinked temporary file under
    /// `$TMPDIR` (else /tmp); checks cancellation between chunks. Throws `.limitExceeded` past `maxBytes`,
    /// `.io` when the file cannot be written, and whatever the source throws.
    package static func make(from source: any ByteSource, name: String, maxBytes: Int, chunk: Int = 4 << 20) throws -> FileByteSource {
        guard source.count <= maxBytes else {
            throw FlipbookError(.limitExceeded, "\(name) is \(source.count) bytes, over the limit of \(maxBytes) bytes")
        }
        let folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/flipbook-spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw FlipbookError(.io, "cannot create a temporary file in \(folder)", underlying: String(cString: strerror(errno))) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunk, source.count)))
        var offset = 0
        do {
            while offset < source.count {
                try Cancellation.check("reading \(name)")
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
                guard n > 0 else { throw FlipbookError(.truncated, "\(name) ended after \(offset) of \(source.count) bytes") }
                var written = 0
                while written < n {
                    let w = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, n - written) }
                    if w < 0 && errno == EINTR { continue }
                    guard w > 0 else { throw FlipbookError(.io, "cannot write a temporary copy of \(name)", underlying: String(cString: strerror(errno))) }
                    written += w
                }
                offset += n
            }
        } catch {
            close(fd)
            throw error
        }
        return try FileByteSource(adopting: fd, name: name)
    }
}
