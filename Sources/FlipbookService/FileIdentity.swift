import Flipbook
#if canImport(Glibc)
import Glibc
#endif

/// A source file as the caches know it: device, inode, size and modification time (ns) from its `stat`.
/// Many links to one file share it, and a file changed in any of these has a new one at once. Four integers:
/// hashed and compared in the memory cache without building text; `text` is the disk cache's spelling.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    /// st_mtim in nanoseconds.
    var modified: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        modified = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
    }

    /// "device:inode:size:mtime-ns", as the disk cache's keys spell it. Allocates the string.
    var text: String {
        String(utf8Capacity: 3 + 4 * UTF8Builder.integerCapacity) { text in
            text.append(decimal: device)
            text.append(ascii: UInt8(ascii: ":"))
            text.append(decimal: inode)
            text.append(ascii: UInt8(ascii: ":"))
            text.append(decimal: size)
            text.append(ascii: UInt8(ascii: ":"))
            text.append(decimal: modified)
        }
    }
}
