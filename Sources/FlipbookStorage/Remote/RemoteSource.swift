import FlipbookCore

/// A remote URL as a `ByteSource`, read by ranges through the guard: what every command that takes a URL
/// opens.
package enum RemoteSource {
    /// Opens `url` under `policy`: the first ranged GET (or, for an origin without ranges, the whole body
    /// within the byte limit). Throws `fetch-refused` (before any packet is sent), `fetch-failed`,
    /// `not-found`, `timeout` or `limit-exceeded`. Blocking.
    package static func open(_ url: String, policy: FetchPolicy) throws -> HTTPRangeSource {
        let fetcher = try RemoteURLFetcher(url: url, policy: policy)
        let source = try HTTPRangeSource(fetcher)
        guard source.count <= policy.maxSourceBytes else {
            throw FlipbookError(.limitExceeded, "the file is \(source.count) bytes, over the limit of \(policy.maxSourceBytes) bytes")
        }
        return source
    }
}
