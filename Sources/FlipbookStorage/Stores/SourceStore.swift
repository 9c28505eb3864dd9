import FlipbookCore

/// A place sources are listed and read from: a local folder (`LocalStore`) or an S3 prefix (`S3Store`). The
/// commands that walk a "folder" (convert, ingest, the gallery, the worker's root) go through it, so the next
/// kind of store is one type, not another pass over the commands.
package protocol SourceStore: Sendable {
    /// The root as a user writes it: a path, or `s3://BUCKET/PREFIX/`.
    var root: String { get }
    /// Every source below the root, recursively, in the order of their relative names (bytewise, as S3 lists
    /// them). Hidden entries (a name starting with ".") are left out when `includeHidden` is false.
    func list(includeHidden: Bool) throws -> [StoreEntry]
    /// One source's facts without reading it (a stat, a HEAD). `relative` must stay inside the root: empty,
    /// "." and ".." segments, NUL and backslashes are refused (`invalid-argument`), and a local path that
    /// leads out through a symlink is refused too.
    func entry(_ relative: String) throws -> StoreEntry
    /// The source's bytes, read by offset (a file, or an object by ranges); `.limitExceeded` past `maxBytes`.
    func open(_ entry: StoreEntry, maxBytes: Int) throws -> any ByteSource
    /// Where `relative` is, as a user writes it (a path, an `s3://` URL).
    func location(_ relative: String) -> String
}

/// One source in a store.
package struct StoreEntry: Sendable, Equatable {
    /// Its name below the store's root, "/"-separated.
    package var relative: String
    /// Its size in bytes.
    package var size: Int
    /// What changes whenever its bytes change: an S3 object's ETag, a file's "device:inode:size:mtime-ns".
    package var identity: String
    /// When it was last modified, in nanoseconds since 1970 (a file's mtime, an object's LastModified).
    package var modifiedNs: Int?

    package init(relative: String, size: Int, identity: String, modifiedNs: Int?) {
        self.relative = relative
        self.size = size
        self.identity = identity
        self.modifiedNs = modifiedNs
    }
}

extension SourceStore {
    /// Refuses relative names that could leave the root or mean two things: empty, "." or ".." segments,
    /// NUL, backslash, a leading "/".
    package static func checkRelative(_ relative: String) throws -> [Substring] {
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, !relative.hasPrefix("/"),
              !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
              !relative.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") })
        else {
            throw FlipbookError(.invalidArgument, "\(relative) is not a name inside the root (empty, '.' or '..' segments, '\\\\' or NUL)")
        }
        return segments
    }
}
