#if canImport(Glibc)
import Glibc
#endif

/// Files written whole or not at all.
public enum AtomicFile {
    /// Writes `bytes` to `path` atomically: a temporary file beside it, then rename, so readers see the old
    /// file or the new one, never a partial one. Refuses to replace any of `inputs` (same device and inode).
    public static func write(_ bytes: [UInt8], to path: String, protecting inputs: [String] = []) throws {
        var target = stat()
        if stat(path, &target) == 0 {
            for input in inputs {
                var info = stat()
                if stat(input, &info) == 0, info.st_dev == target.st_dev, info.st_ino == target.st_ino {
                    throw FlipbookError(.invalidArgument, "refusing to overwrite the input \(input)")
                }
            }
        }
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FlipbookError(.io, "cannot create \(temporary)", underlying: String(cString: strerror(errno))) }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        var written = 0
        try bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    let why = String(cString: strerror(errno))
                    close(fd)
                    throw FlipbookError(.io, "cannot write \(path)", underlying: why)
                }
                written += n
            }
        }
        guard close(fd) == 0 else { throw FlipbookError(.io, "cannot write \(path)", underlying: String(cString: strerror(errno))) }
        guard rename(temporary, path) == 0 else {
            throw FlipbookError(.io, "cannot rename into \(path)", underlying: String(cString: strerror(errno)))
        }
        ok = true
    }
}
