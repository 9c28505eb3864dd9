import FlipbookCore

/// Where a command's input or output lives, parsed from what the user typed: a local path, an S3 object or
/// "folder" (`s3://BUCKET/KEY`, `s3://BUCKET/PREFIX/`, as the aws CLI and rclone write them), or a remote
/// `http`/`https` URL. Pure text: nothing is resolved or fetched.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// A path on this machine, as typed.
    case local(String)
    /// An S3 bucket and a key or prefix (may be empty: the whole bucket). A prefix ends in "/".
    case s3(bucket: String, key: String)
    /// An `http` or `https` URL, as typed.
    case http(String)

    /// Parses `text`. `s3://` needs a bucket name; other schemes than s3, http and https are refused
    /// (`fetch-refused`), so `file://` or `ftp://` never reads as a local path by accident.
    public init(_ text: String) throws {
        if let rest = Self.dropScheme("s3", from: text) {
            let bucketEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            let bucket = String(rest[..<bucketEnd])
            guard !bucket.isEmpty else { throw FlipbookError(.invalidArgument, "\(text): an s3:// URL names a bucket (s3://BUCKET/KEY)") }
            let key = bucketEnd < rest.endIndex ? String(rest[rest.index(after: bucketEnd)...]) : ""
            self = .s3(bucket: bucket, key: key)
        } else if Self.dropScheme("http", from: text) != nil || Self.dropScheme("https", from: text) != nil {
            self = .http(text)
        } else if let colon = text.firstIndex(of: ":"), let slash = text.firstIndex(of: "/"), colon < slash,
                  text[text.index(after: colon)...].hasPrefix("//"), text[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) {
            throw FlipbookError(.fetchRefused, "the scheme \(text[..<colon].lowercased()) is not fetched: sources are local paths, s3:// and http(s):// URLs")
        } else {
            self = .local(text)
        }
    }

    /// Whether this names a folder (a local directory is only known by looking; an S3 prefix by its "/").
    public var isPrefix: Bool {
        switch self {
        case .local(let path): path.hasSuffix("/")
        case .s3(_, let key): key.isEmpty || key.hasSuffix("/")
        case .http: false
        }
    }

    public var description: String {
        switch self {
        case .local(let path): path
        case .s3(let bucket, let key): "s3://\(bucket)/\(key)"
        case .http(let url): url
        }
    }

    /// `text` after `scheme://` (scheme case-insensitive), or nil.
    static func dropScheme(_ scheme: String, from text: String) -> Substring? {
        let prefix = scheme + "://"
        guard text.utf8.count >= prefix.utf8.count, text.prefix(prefix.count).lowercased() == prefix else { return nil }
        return text.dropFirst(prefix.count)
    }
}
