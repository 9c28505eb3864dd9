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

    /// A stand-in for a source that is not a local file (an object, a URL), whose identity is `text` (the
    /// object's name and ETag, the URL and its validator): device 0 and a 64-bit FNV-1a hash of the text as
    /// the inode, so the memory cache's hash spreads such keys too. `DerivativeKey.remote` holds the text
    /// itself, which `==` compares.
    init(remote text: String, size: Int) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        device = 0
        inode = hash
        self.size = size
        modified = 0
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
