#if canImport(Glibc)
import Glibc
#endif

/// A folder's entries through `opendir`/`readdir`, for the gallery's listing, the disk cache's scan and the
/// CLI's walk of an input tree.
package enum DirectoryNames {
    /// Names in the folder at `path` (not `.` or `..`) as raw bytes (names need not be UTF-8), or nil if it
    /// cannot be opened. Each `d_name` is read in place, up to its NUL: copying the 256-byte array reads past
    /// the end of a short record (glibc packs entries by `d_reclen`), which ASan reported as a heap overflow
    /// in `make sanitize`.
    package static func bytes(_ path: String) -> [[UInt8]]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var out: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { field -> [UInt8] in
                let start = UnsafeRawPointer(field)
                return Array(UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self))))
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            out.append(name)
        }
        return out
    }

    /// `bytes(path)` as strings, invalid UTF-8 repaired as `String(cString:)` repairs it.
    package static func strings(_ path: String) -> [String]? {
        bytes(path)?.map { String(decoding: $0, as: UTF8.self) }
    }
}
