import Crypto
import Flipbook
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A content-addressed disk cache of derivatives that survives restarts and may be shared by several
/// processes.
///
/// Layout under the folder: `objects/xx/<sha256 of content>` holds the bytes; `keys/xx/<sha256 of key>`
/// holds three lines (ETag, content type, object name). Every file is written to `tmp/` and renamed into
/// place, so a reader in any process sees a whole file or none; two processes writing the same derivative
/// write identical bytes to the same name. A key whose object another process trimmed is a miss. When the
/// objects pass `limit` bytes, one process at a time (an `flock` on `lock`) deletes the least recently used
/// (oldest mtime; a hit touches it) until they fill 70 % of it.
final class DiskCache: Sendable {
    let directory: String
    let limit: Int
    /// Approximate bytes in `objects/`: a full scan at start and after each trim, plus this process's writes.
    private let approximateBytes = Atomic<Int>(0)

    init(directory: String, limit: Int) throws {
        self.directory = directory
        self.limit = limit
        for sub in ["", "/objects", "/keys", "/tmp"] {
            let path = directory + sub
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw FlipbookError(.io, "cannot create the disk cache folder \(path)", underlying: String(cString: strerror(errno)))
            }
        }
        approximateBytes.store(Self.scan(directory + "/objects").reduce(0) { $0 + $1.size }, ordering: .relaxed)
    }

    private func keyPath(_ key: String) -> (folder: String, file: String) {
        let name = Hex.string(SHA256.hash(data: Array(key.utf8)))
        let folder = "\(directory)/keys/\(name.prefix(2))"
        return (folder, "\(folder)/\(name)")
    }

    private func objectPath(_ name: String) -> (folder: String, file: String) {
        let folder = "\(directory)/objects/\(name.prefix(2))"
        return (folder, "\(folder)/\(name)")
    }

    /// What the index holds under `key`: the ETag, the content type and the path of the object with the
    /// bytes (not read). Blocking file I/O: call it from a worker.
    func entry(for key: String) -> (etag: String, contentType: String, object: String)? {
        guard let index = Self.readFile(keyPath(key).file), let text = String(validating: index, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count == 3, !lines[2].contains("/") else { return nil }
        return (lines[0], lines[1], objectPath(lines[2]).file)
    }

    /// The derivative stored under `key`, if any, with its bytes in `file` when it has at least
    /// `fileMinimumBytes` of them (the object held open, not read), else read into memory. Marks the
    /// object recently used. Blocking file I/O: call it from a worker.
    func value(for key: String, fileMinimumBytes: Int = .max) -> Derivative? {
        guard let entry = entry(for: key), let file = CachedFile(path: entry.object) else { return nil }
        utimensat(AT_FDCWD, entry.object, nil, 0)  // now: recently used
        if file.size >= fileMinimumBytes {
            return Derivative(bytes: ByteBuffer(), contentType: entry.contentType, etag: entry.etag, cache: .disk, file: file)
        }
        guard let bytes = try? file.read(offset: 0, length: file.size) else { return nil }
        return Derivative(bytes: bytes, contentType: entry.contentType, etag: entry.etag, cache: .disk)
    }

    /// Stores `value` under `key` (object first, then the key that names it), then trims if over the limit;
    /// returns the object's path, or nil if it could not be stored. Failures are otherwise ignored: the
    /// cache is an optimisation, never a reason to fail a request.
    @discardableResult
    func insert(_ value: Derivative, for key: String) -> String? {
        let name = Hex.string(value.bytes.withUnsafeReadableBytes { SHA256.hash(data: $0) })
        let object = objectPath(name)
        var stored = false
        if access(object.file, F_OK) != 0 {
            mkdir(object.folder, 0o755)
            stored = writeAtomically(value.bytes.readableBytesView, to: object.file)
            guard stored else { return nil }
        }
        let index = keyPath(key)
        mkdir(index.folder, 0o755)
        _ = writeAtomically(Array("\(value.etag)\n\(value.contentType)\n\(name)\n".utf8), to: index.file)
        if stored, approximateBytes.add(value.size, ordering: .relaxed).newValue > limit { trim() }
        return object.file
    }

    private func writeAtomically(_ bytes: some Collection<UInt8>, to path: String) -> Bool {
        let temporary = "\(directory)/tmp/\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        let array = Array(bytes)
        var written = 0
        let ok = array.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let n = write(fd, raw.baseAddress! + written, raw.count - written)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; return false }
                written += n
            }
            return true
        }
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Deletes the least recently used objects until they fill at most 70 % of the limit. Skipped when
    /// another process is trimming the same folder.
    func trim() {
        let lockFD = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { return }
        defer { close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { return }
        defer { flock(lockFD, LOCK_UN) }
        var files = Self.scan(directory + "/objects")
        var total = files.reduce(0) { $0 + $1.size }
        let target = limit / 10 * 7
        if total > target {
            files.sort { $0.mtime < $1.mtime }
            for file in files where total > target {
                if unlink(file.path) == 0 { total -= file.size }
            }
        }
        approximateBytes.store(total, ordering: .relaxed)
    }

    /// Files one or two levels under `folder`, with size and mtime (ns).
    static func scan(_ folder: String) -> [(path: String, size: Int, mtime: Int)] {
        var out: [(path: String, size: Int, mtime: Int)] = []
        func walk(_ path: String, depth: Int) {
            for name in DirectoryNames.strings(path) ?? [] {
                let child = path + "/" + name
                var info = stat()
                guard lstat(child, &info) == 0 else { continue }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    if depth < 1 { walk(child, depth: depth + 1) }
                } else if (info.st_mode & S_IFMT) == S_IFREG {
                    out.append((child, Int(info.st_size), Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)))
                }
            }
        }
        walk(folder, depth: 0)
        return out
    }

    /// The whole file, or nil.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        let ok = bytes.withUnsafeMutableBytes { raw -> Bool in
            while done < size {
                let n = read(fd, raw.baseAddress! + done, size - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        return ok ? bytes : nil
    }
}
