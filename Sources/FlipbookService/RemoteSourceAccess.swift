import Flipbook
import Synchronization

/// How a job reads a source that is not a local file: an object under an S3 root or a URL. Resolving it made
/// one request (a HEAD, a first ranged GET, or a conditional GET answered 304) and fixed its identity; the job
/// reads the source that first GET opened, or opens it now, pinned to that identity (a source that changed
/// in between fails `source-changed`, so no derivative is ever kept under the identity of other bytes).
final class RemoteSourceAccess: Sendable {
    /// The source as a user writes it (`s3://BUCKET/KEY`, the URL), for messages.
    let name: String
    /// What identifies its bytes: the name, the ETag or date, and the size.
    let identity: String
    /// Whether a URL named it (rather than a path under an S3 root).
    let isURL: Bool
    /// The source opened by the first fetch, handed to the first job that asks; later ones open their own.
    private let opened: Mutex<(any ByteSource)?>
    private let reopen: @Sendable () throws -> any ByteSource

    /// Access to a source already open (`opened`), or to one that `open` opens when a job needs it.
    init(name: String, identity: String, isURL: Bool, opened: (any ByteSource)? = nil, open: @escaping @Sendable () throws -> any ByteSource) {
        self.name = name
        self.identity = identity
        self.isURL = isURL
        self.opened = Mutex(opened)
        reopen = open
    }

    /// The source: the one already open, once, else a new one. Blocking (network).
    func source() throws -> any ByteSource {
        if let held = opened.withLock({ held -> (any ByteSource)? in
            defer { held = nil }
            return held
        }) {
            return held
        }
        return try reopen()
    }
}
