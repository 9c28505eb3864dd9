import FlipbookCore

/// The validators a remote object answered with first; every later read is pinned to them, so an object
/// replaced mid-read fails with `.sourceChanged` instead of yielding a file made of two versions.
package struct RemoteValidator: Sendable, Equatable {
    /// The `ETag` as sent, quotes included (S3's is the MD5 of a single-part object, or a multipart tag).
    package var etag: String?
    /// The `Last-Modified` date as sent.
    package var lastModified: String?

    /// Whether the ETag may be used with `If-Match` (a weak one may not: RFC 9110 13.1.1).
    package var strongETag: String? {
        guard let etag, !etag.hasPrefix("W/") else { return nil }
        return etag
    }
}

/// Ranged GETs of one remote object: an S3 object (signed, retried) or a URL (through the address guard).
/// The fetcher sends the pin its way (`If-Match`, or `If-Range` where only a date is known) and turns error
/// statuses into typed errors; `HTTPRangeSource` reads its answers. Blocking, like `ByteSource`.
package protocol RangeFetching: Sendable {
    /// What to call the object in messages (its URL).
    var name: String { get }
    /// The most body bytes one answer may carry: a whole-object answer (an origin that ignores `Range`) is
    /// refused past it.
    var maxBytes: Int { get }
    /// A GET of `range` (nil: the whole object) pinned to `pin` when given. Returns the answer for a 200,
    /// 206 or 416; throws typed errors for the rest (`.notFound`, `.accessDenied`, `.sourceChanged` for a
    /// 412, `.fetchFailed`, `.timeout`, `.fetchRefused`).
    func get(_ range: Range<Int>?, pin: RemoteValidator?) throws -> HTTPExchange.Answer
}
