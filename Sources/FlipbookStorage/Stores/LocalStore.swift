import FlipbookCore
#if canImport(Glibc)
import Glibc
#endif

/// A folder on this machine as a store. Listing follows no symlink (`lstat`: a link to a file elsewhere is not
/// walked into); resolving an entry does follow one, but only to a regular file that is still inside the root
/// (its real path checked), the rule `serve` has always applied.
package struct LocalStore: SourceStore {
    package let root: String
    /// The root's real path (symlinks resolved), every entry's real path starts with it.
    package let realRoot: String

    /// A store over the folder `root`. Throws `.io` if it is not a readable folder.
    package init(root: String) throws {
        let trimmed = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        guard let real = realPath(trimmed) else {
            throw FlipbookError(.io, "cannot resolve \(trimmed)", underlying: String(cString: strerror(errno)))
        }
        var info = stat()
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw FlipbookError(.io, "\(trimmed) is not a folder") }
        self.root = trimmed
        realRoot = real
    }

    package func location(_ relative: String) -> String { root == "/" ? "/" + relative : root + "/" + relative }

    package func list(includeHidden: Bool) throws -> [StoreEntry] {
        var out: [StoreEntry] = []
        func walk(_ relative: String) {
            let folder = relative.isEmpty ? root : location(relative)
            for name in DirectoryNames.strings(folder) ?? [] {
                if !includeHidden && name.hasPrefix(".") { continue }
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(location(child), &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: walk(child)
                case S_IFREG: out.append(Self.entry(of: child, info))
                default: break
                }
            }
        }
        walk("")
        // Bytewise, as S3 orders keys: the same shard and report order whichever store the files are in.
        return out.sorted { Array($0.relative.utf8).lexicographicallyPrecedes(Array($1.relative.utf8)) }
    }

    package func entry(_ relative: String) throws -> StoreEntry {
        _ = try Self.checkRelative(relative)
        let path = location(relative)
        guard let real = realPath(path) else { throw FlipbookError(.io, "cannot open \(path)", underlying: String(cString: strerror(errno))) }
        guard real == realRoot || real.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            throw FlipbookError(.invalidArgument, "\(relative) leads outside the root")
        }
        var info = stat()
        guard stat(real, &info) == 0 else { throw FlipbookError(.io, "cannot open \(path)", underlying: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw FlipbookError(.io, "\(path) is not a regular file") }
        return Self.entry(of: relative, info)
    }

    package func open(_ entry: StoreEntry, maxBytes: Int) throws -> any ByteSource {
        let file = try FileByteSource(path: location(entry.relative))
        guard file.count <= maxBytes else {
            throw FlipbookError(.limitExceeded, "input is \(file.count) bytes, over the \(maxBytes)-byte limit")
        }
        return file
    }

    /// The entry of the file at `relative` whose `stat` is `info`.
    package static func entry(of relative: String, _ info: stat) -> StoreEntry {
        let mtime = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
        return StoreEntry(relative: relative, size: Int(info.st_size),
                          identity: "\(info.st_dev):\(info.st_ino):\(info.st_size):\(mtime)", modifiedNs: mtime)
    }
}
