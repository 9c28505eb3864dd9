import Flipbook
#if canImport(Glibc)
import Glibc
#endif

/// Resolving a request's path segments to a file inside the root, and the identity that keys its
/// derivatives. Every request does this, cache hits included, so the common case (no symlink on the way)
/// costs one `fstatat` per segment, relative to the root's descriptor; a symlink anywhere sends the request
/// through `realpath`.
/// Nothing is cached between requests: a changed file has a new identity at once.
extension DerivativeService {
    /// A file under the root, resolved, with the identity that keys its derivatives.
    struct ResolvedSource: Sendable {
        /// Real path (symlinks followed), inside the root.
        var path: String
        /// The request's decoded path segments.
        var segments: [String]
        /// "device:inode:size:mtime-ns" of the resolved file: many links to one file share derivatives.
        var identity: String
        var size: Int

        /// The request's path, percent-encoded segment by segment (for URLs in storyboards).
        var encodedPath: String { URLPath.encode(segments) }

        init(path: String, segments: [String], info: stat) {
            self.path = path
            self.segments = segments
            let mtime = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
            identity = String(utf8Capacity: 3 + 4 * UTF8Builder.integerCapacity) { text in
                text.append(decimal: UInt64(info.st_dev))
                text.append(ascii: UInt8(ascii: ":"))
                text.append(decimal: UInt64(info.st_ino))
                text.append(ascii: UInt8(ascii: ":"))
                text.append(decimal: Int(info.st_size))
                text.append(ascii: UInt8(ascii: ":"))
                text.append(decimal: mtime)
            }
            size = Int(info.st_size)
        }
    }

    /// Checks the segments, resolves symlinks and insists the result is a regular file inside the root.
    func resolve(_ segments: [String]) throws -> ResolvedSource {
        guard !segments.isEmpty else { throw DerivativeServiceError.badPath("no file named") }
        for segment in segments {
            if segment.isEmpty || segment == "." || segment == ".."
                || segment.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\\") })
            {
                throw DerivativeServiceError.badPath("the path may not contain empty, '.' or '..' segments, '/', '\\\\' or NUL")
            }
            if segment.hasPrefix(".") { throw DerivativeServiceError.notFound("no such file") }
        }
        // Walk down from the root (opened at start) without following anything: while no component is a
        // symlink, root + the joined segments is the real path, and the last lstat is the file's own stat.
        var relative = ""
        var info = stat()
        for (index, segment) in segments.enumerated() {
            if index > 0 { relative += "/" }
            relative += segment
            guard fstatat(rootDirectory, relative, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw DerivativeServiceError.notFound("no such file")
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK: return try resolveFollowingLinks(segments)
            case S_IFDIR where index < segments.count - 1: continue
            case S_IFREG where index == segments.count - 1:
                return ResolvedSource(path: Self.join(root, relative), segments: segments, info: info)
            default: throw DerivativeServiceError.notFound("no such file")
            }
        }
        throw DerivativeServiceError.notFound("no such file")
    }

    /// `relative` under `root` ("/" joins without a second slash), built in one allocation.
    static func join(_ root: String, _ relative: String) -> String {
        String(utf8Capacity: root.utf8.count + 1 + relative.utf8.count) { text in
            text.append(root)
            if root != "/" { text.append(ascii: UInt8(ascii: "/")) }
            text.append(relative)
        }
    }

    /// The path has a symlink: `realpath`, then the jail and dotfile checks on where it really leads.
    private func resolveFollowingLinks(_ segments: [String]) throws -> ResolvedSource {
        let joined = root + "/" + segments.joined(separator: "/")
        guard let resolved = realpath(joined, nil) else { throw DerivativeServiceError.notFound("no such file") }
        let real = String(cString: resolved)
        free(resolved)
        guard real.hasPrefix(root == "/" ? "/" : root + "/") else { throw DerivativeServiceError.notFound("no such file") }
        // A symlink inside the root to a dotfile inside the root is as hidden as the dotfile.
        if real.dropFirst(root.count).split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
            throw DerivativeServiceError.notFound("no such file")
        }
        var info = stat()
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw DerivativeServiceError.notFound("no such file")
        }
        return ResolvedSource(path: real, segments: segments, info: info)
    }
}
