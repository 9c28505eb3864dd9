import Flipbook
#if canImport(Glibc)
import Glibc
#endif

/// Resolving a request's path segments to a file inside the root, and the identity that keys its
/// derivatives. Every request does this, cache hits included, so the common case (no symlink on the way)
/// costs one `fstatat` per segment, relative to the root's descriptor, and no text is built: the real path
/// and the identity's text are spelled only when a job or the disk cache needs them. A symlink anywhere sends
/// the request through `realpath`.
/// Nothing is cached between requests: a changed file has a new identity at once.
extension DerivativeService {
    /// A file under the root, resolved, with the identity that keys its derivatives.
    struct ResolvedSource: Sendable {
        /// Where the file is: the root and the joined segments (no symlink on the way), or a real path.
        private enum Location: Sendable {
            case underRoot(root: String, relative: String)
            case real(String)
        }

        private let location: Location
        /// The request's decoded path segments.
        var segments: [String]
        /// Device, inode, size and mtime of the resolved file: many links to one file share derivatives.
        var file: FileIdentity
        var size: Int { file.size }

        /// Real path (symlinks followed), inside the root. Built (one allocation) on each use.
        var path: String {
            switch location {
            case .underRoot(let root, let relative): DerivativeService.join(root, relative)
            case .real(let path): path
            }
        }

        /// "device:inode:size:mtime-ns" of the resolved file (`FileIdentity.text`). Built on each use.
        var identity: String { file.text }

        /// The request's path, percent-encoded segment by segment (for URLs in storyboards).
        var encodedPath: String { URLPath.encode(segments) }

        /// The file at the real path `path`, whose `stat` is `info`.
        init(path: String, segments: [String], info: stat) {
            location = .real(path)
            self.segments = segments
            file = FileIdentity(info)
        }

        /// The file at `relative` under `root`, no symlink on the way, whose `stat` is `info`.
        init(root: String, relative: String, segments: [String], info: stat) {
            location = .underRoot(root: root, relative: relative)
            self.segments = segments
            file = FileIdentity(info)
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
            // (`hasPrefix` compares characters; a segment that passes it starts with the byte first.)
            if segment.utf8.first == UInt8(ascii: "."), segment.hasPrefix(".") { throw DerivativeServiceError.notFound("no such file") }
        }
        // Walk down from the root (opened at start) without following anything: while no component is a
        // symlink, root + the joined segments is the real path, and the last lstat is the file's own stat.
        var relative = ""
        var info = stat()
        for (index, segment) in segments.enumerated() {
            if index == 0 {
                relative = segment
            } else {
                relative += "/"
                relative += segment
            }
            // (withCString: passing the String itself converts it into a new array first.)
            guard relative.withCString({ fstatat(rootDirectory, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else {
                throw DerivativeServiceError.notFound("no such file")
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK: return try resolveFollowingLinks(segments)
            case S_IFDIR where index < segments.count - 1: continue
            case S_IFREG where index == segments.count - 1:
                return ResolvedSource(root: root, relative: relative, segments: segments, info: info)
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
