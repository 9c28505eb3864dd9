/// What Signature Version 4 signs of one HTTP request: its method, Host, encoded path, raw query, the headers to
/// sign and the payload's hash. A value type; building one costs only its strings.
package struct SigV4Request: Sendable {
    /// The HTTP method, upper case (`GET`, `PUT`, ...).
    package var method: String
    /// The Host header's value: the host, and `:port` when the port is not the scheme's default.
    package var host: String
    /// The request path exactly as it goes on the wire, already percent-encoded (for S3, ``S3Addressing/encodePath(_:)``
    /// of the key: each byte outside A-Za-z0-9-_.~ and '/' as %XX). S3 signs it as it is; other services
    /// normalise and encode it again (see ``SigV4/normalizesPath``). Empty means "/".
    package var path: String
    /// The query's names and values, raw (not percent-encoded), in the order they go on the wire. Repeated
    /// names and empty values are kept; a value-less sub-resource (`?uploads`) is a name with an empty value.
    package var query: [(name: String, value: String)]
    /// The headers to sign besides Host (which the signer adds from ``host``): Range, Content-Type,
    /// x-amz-meta-*, ... Names in any case, repeated names allowed. Hop-by-hop and client headers that proxies
    /// rewrite (User-Agent, Expect, Connection, Transfer-Encoding, Upgrade, X-Amzn-Trace-Id) are never signed.
    package var headers: [(name: String, value: String)]
    /// The lowercase hex SHA-256 of the body (``SigV4/emptyPayloadHash`` for none), or `UNSIGNED-PAYLOAD`.
    package var payloadHash: String

    /// A request to sign; the payload defaults to the hash of an empty body.
    package init(method: String, host: String, path: String, query: [(name: String, value: String)] = [],
                 headers: [(name: String, value: String)] = [], payloadHash: String = SigV4.emptyPayloadHash) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
        self.payloadHash = payloadHash
    }

    /// The query as it goes on the wire after the path (without "?"): each name and value percent-encoded as
    /// SigV4 encodes them, `name=value` joined with "&" in the given order ("" for no parameters).
    package var encodedQuery: String {
        query.map { AWSPercentEncoding.encode($0.name) + "=" + AWSPercentEncoding.encode($0.value) }.joined(separator: "&")
    }
}
