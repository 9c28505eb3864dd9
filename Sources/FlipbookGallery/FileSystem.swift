import Flipbook
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


    /// Names in the folder at `path` (not `.` or `..`) as raw bytes, or nil if it cannot be opened.
    static func names(_ path: String) -> [[UInt8]]? { DirectoryNames.bytes(path) }
}
