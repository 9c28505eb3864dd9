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
    /// A source, resolved, with the identity that keys its derivatives: a file under a local root, or a
    /// source read over the network (an object under an S3 root, a URL), whose identity is its validator.
    struct ResolvedSource: Sendable {
        /// Where the file is: the root and the joined segments (no symlink on the way), a real path, or a
        /// remote source.
        private enum Location: Sendable {
            case underRoot(root: String, relative: String)
            case real(String)
            case remote(RemoteSourceAccess)
        }

        private let location: Location
        /// The request's decoded path segments (empty for a URL).
        var segments: [String]
        /// Device, inode, size and mtime of the resolved file: many links to one file share derivatives. For a
        /// remote source, a stand-in made from `remote` (`FileIdentity(remote:size:)`).
        var file: FileIdentity
        var size: Int { file.size }

        /// Real path (symlinks followed), inside the root; a remote source's name. Built on each use.
        var path: String {
            switch location {
            case .underRoot(let root, let relative): DerivativeService.join(root, relative)
            case .real(let path): path
            case .remote(let access): access.name
            }
        }

        /// What identifies a remote source's bytes (the key of its derivatives); nil for a local file.
        var remote: String? {
            if case .remote(let access) = location { return access.identity }
            return nil
        }

        /// Whether the source was named by a URL rather than a path under the root.
        var isURL: Bool {
            if case .remote(let access) = location { return access.isURL }
            return false
        }

        /// "device:inode:size:mtime-ns" of the resolved file (`FileIdentity.text`). Built on each use.
        var identity: String { remote ?? file.text }

        /// The request's path, percent-encoded segment by segment (for URLs in storyboards); for a URL source,
        /// the URL percent-encoded as one query value.
        var encodedPath: String {
            if case .remote(let access) = location, access.isURL { return URLPath.encode(access.name) }
            return URLPath.encode(segments)
        }

        /// The source's bytes: the file opened, or the remote source (already open from its first fetch, or
        /// opened now, pinned to the validator it was resolved with).
        func open() throws -> any ByteSource {
            switch location {
            case .underRoot, .real: try FileByteSource(path: path)
            case .remote(let access): try access.source()
            }
        }

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

        /// A source read over the network, of `size` bytes.
        init(remote access: RemoteSourceAccess, segments: [String], size: Int) {
            location = .remote(access)
            self.segments = segments
            file = FileIdentity(remote: access.identity, size: size)
        }
    }

    /// Refuses segments that could leave the root or name a hidden entry: empty, "." or "..", a slash, a backslash or
    /// NUL inside one (400), a leading "." (404, as a dotfile is not there to be served).
    static func checkSegments(_ segments: [String]) throws {
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
    }

    /// Checks the segments, resolves symlinks and insists the result is a regular file inside the root.
    func resolve(_ segments: [String]) throws -> ResolvedSource {
        try Self.checkSegments(segments)
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
