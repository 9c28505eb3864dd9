/// How a request names its bucket: in the path (`https://endpoint/BUCKET/KEY`, path-style) or in the host
/// name (`https://BUCKET.endpoint/KEY`, virtual-hosted), and S3's encoding of keys into request paths.
package enum S3Addressing: Sendable, Equatable {
    /// `endpoint/BUCKET/KEY`: works everywhere, needed for IP and localhost endpoints and for bucket names
    /// that are not DNS labels; AWS keeps it for older buckets only.
    case path
    /// `BUCKET.endpoint/KEY`: AWS's default.
    case virtualHosted

    /// The Host header and the request path (encoded, ready to sign and send) of `key` in `bucket` at
    /// `endpoint`. An empty key names the bucket itself (listing, multipart uploads' bucket calls).
    package func target(bucket: String, key: String, endpoint: AWSEndpoint) -> (host: String, path: String) {
        switch self {
        case .path:
            let bucketPath = endpoint.basePath + "/" + AWSPercentEncoding.encode(bucket)
            return (endpoint.hostHeader, key.isEmpty ? bucketPath : bucketPath + "/" + Self.encodePath(key))
        case .virtualHosted:
            return (endpoint.hostHeader(bucket.lowercased() + "." + endpoint.host), endpoint.basePath + "/" + Self.encodePath(key))
        }
    }

    /// An object key as an S3 request path segment: every byte of its UTF-8 outside A-Za-z0-9-_.~ becomes
    /// %XX (upper case), '/' stays, and nothing is normalised, so `a//b/./c/` and `日本 語+=.txt` reach S3
    /// exactly as named. Encoded once: S3 signs this same string.
    package static func encodePath(_ key: String) -> String {
        AWSPercentEncoding.encode(key, keepingSlash: true)
    }
}
