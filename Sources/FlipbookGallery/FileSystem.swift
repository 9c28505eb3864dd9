#if canImport(Glibc)
import Glibc
#endif

/// The few POSIX calls the listing needs, each wrapped once. Nothing here follows a path outside the root
/// on its own: callers check every resolved path with `Root.contains`.
enum FileSystem {
    /// What `stat` says about a path (symlinks followed).
    struct Status: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedNs: Int64
        var isDirectory: Bool
        var isRegular: Bool
    }

    static func status(_ path: String) -> Status? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let type = st.st_mode & S_IFMT
        return Status(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                      modifiedNs: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                      isDirectory: type == S_IFDIR, isRegular: type == S_IFREG)
    }

    /// The real path (every symlink resolved), or nil if it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Names in the folder at `path` (not `.` or `..`) as raw bytes, or nil if it cannot be opened.
    static func names(_ path: String) -> [[UInt8]]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var out: [[UInt8]] = []
        while let entry = readdir(dir) {
            // d_name read in place, up to its NUL: copying the 256-byte array reads past the end of a short
            // record (glibc packs entries by d_reclen), which ASan reported as a heap overflow in `make sanitize`.
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { field -> [UInt8] in
                let start = UnsafeRawPointer(field)
                return Array(UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self))))
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            out.append(name)
        }
        return out
    }
}
