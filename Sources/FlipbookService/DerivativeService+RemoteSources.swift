import Crypto
import Flipbook
import FlipbookStorage

/// Sources that are not local files: objects under an `s3://` root and sources named by URL. Resolving one
/// is a network request, made on the service's fetch threads (never an event loop, Swift's cooperative pool or
/// a decode worker): a HEAD for an object, whose ETag and size key its derivatives; for a URL, a first ranged
/// GET, or, when the URL was fetched before, a conditional GET (`If-None-Match` with the origin's ETag, else
/// `If-Modified-Since`) that a `304` answers with no body. A changed object or file gets a new identity and so
/// new derivatives; nothing made from one version is served for another.
extension DerivativeService {
    /// Bytes of a URL's first GET, which gives its size, validators and first bytes at once.
    static let firstRead = 64 << 10

    /// Resolves `request`'s source over the network. Blocking: call it on a fetch thread.
    func resolveRemote(_ request: DerivativeRequest) throws -> ResolvedSource {
        if let url = request.url { return try resolveURL(url) }
        return try resolveObject(request.segments)
    }

    /// The object at `segments` under the S3 root: one HEAD. `not-found` for a missing key (and for hidden
    /// names, as on a local root); the segments are checked as a local path's are, so no key outside the
    /// prefix is ever named.
    func resolveObject(_ segments: [String]) throws -> ResolvedSource {
        guard let store = objectStore else { throw DerivativeServiceError.notFound("no such file") }
        try Self.checkSegments(segments)
        let object = S3Object(bucket: store.bucket, key: store.prefix + segments.joined(separator: "/"))
        let info = try store.client.head(object)
        let maxBytes = configuration.limits.maxInputBytes
        try configuration.limits.checkBytes(info.size)
        let client = store.client
        let access = RemoteSourceAccess(name: object.description, identity: "\(object)|\(info.etag)|\(info.size)", isURL: false) {
            let source = try client.open(object, maxBytes: maxBytes)
            // The GET's ETag must be the HEAD's: otherwise the object was replaced in between, and what the job
            // made would be kept under the old version's identity.
            guard source.validator.etag == info.etag, source.count == info.size else {
                throw FlipbookError(.sourceChanged, "\(object) was replaced while it was read (its ETag changed)")
            }
            return source
        }
        return ResolvedSource(remote: access, segments: segments, size: info.size)
    }

    /// The source at `url`, through the fetch guard: revalidated if it was fetched before, else opened.
    func resolveURL(_ url: String) throws -> ResolvedSource {
        guard let policy = configuration.remoteSources else {
            throw FlipbookError(.fetchRefused, "this server fetches no URLs (remote sources are off)")
        }
        let fetcher = try RemoteURLFetcher(url: url, policy: policy)
        if let known = validators.value(for: url) {
            let answer = try fetcher.revalidate(known.validator, range: 0..<Self.firstRead)
            if answer.status == 304 {
                let access = RemoteSourceAccess(name: url, identity: known.identity, isURL: true) {
                    let source = try HTTPRangeSource(fetcher, firstRead: Self.firstRead)
                    guard source.validator == known.validator, source.count == known.size else {
                        throw FlipbookError(.sourceChanged, "\(url) changed while it was read (its validator no longer matches)")
                    }
                    return source
                }
                return ResolvedSource(remote: access, segments: [], size: known.size)
            }
            return try opened(HTTPRangeSource(fetcher, first: answer, firstRead: Self.firstRead), url: url, policy: policy)
        }
        return try opened(HTTPRangeSource(fetcher, firstRead: Self.firstRead), url: url, policy: policy)
    }

    /// A URL source just opened: checked against the limits, its identity from the origin's validator (kept
    /// for the next revalidation), or, from an origin that sends neither ETag nor Last-Modified, from the
    /// SHA-256 of its first bytes and its size (such an origin cannot be asked whether a file changed, so it
    /// is fetched again on every request).
    private func opened(_ source: HTTPRangeSource, url: String, policy: FetchPolicy) throws -> ResolvedSource {
        guard source.count <= policy.maxSourceBytes else {
            throw FlipbookError(.limitExceeded, "\(url) is \(source.count) bytes, over the limit of \(policy.maxSourceBytes) bytes")
        }
        try configuration.limits.checkBytes(source.count)
        let validator = source.validator
        let identity: String
        if validator.etag != nil || validator.lastModified != nil {
            identity = "\(url)|\(validator.etag ?? "")|\(validator.lastModified ?? "")|\(source.count)"
            validators.set(KnownValidators.Known(validator: validator, size: source.count, identity: identity), for: url)
        } else {
            var first = [UInt8](repeating: 0, count: min(source.count, Self.firstRead))
            let n = try first.withUnsafeMutableBytes { try source.read(into: $0, at: 0) }
            identity = "\(url)|sha256:\(Hex.string(SHA256.hash(data: Array(first.prefix(n)))))|\(source.count)"
        }
        let fetcher = source.fetcher
        let access = RemoteSourceAccess(name: url, identity: identity, isURL: true, opened: source) {
            let again = try HTTPRangeSource(fetcher, firstRead: Self.firstRead)
            guard again.validator == validator, again.count == source.count else {
                throw FlipbookError(.sourceChanged, "\(url) changed while it was read (its validator no longer matches)")
            }
            return again
        }
        return ResolvedSource(remote: access, segments: [], size: source.count)
    }
}
