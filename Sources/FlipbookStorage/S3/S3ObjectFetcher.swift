import FlipbookCore

/// Ranged GETs of one S3 object for `HTTPRangeSource`: signed and retried by the client, every read after
/// the first pinned with `If-Match` to the ETag the first answer gave.
package struct S3ObjectFetcher: RangeFetching {
    package let client: S3Client
    package let object: S3Object
    package let maxBytes: Int
    package var name: String { object.description }

    package init(client: S3Client, object: S3Object, maxBytes: Int) {
        self.client = client
        self.object = object
        self.maxBytes = maxBytes
    }

    package func get(_ range: Range<Int>?, pin: RemoteValidator?) throws -> HTTPExchange.Answer {
        let limit = pin != nil ? (range?.count ?? maxBytes) : maxBytes
        return try client.get(object, range: range, ifMatch: pin?.etag, limit: limit)
    }
}

extension S3Client {
    /// `object` as a `ByteSource` read by ranges (its first `firstRead` bytes fetched now: 64 KiB suits a
    /// reader that seeks, such as a video's poster; a reader that will read the whole object, such as a GIF's
    /// conversion, saves a paid request per doubling of the read-ahead with more). Throws `.limitExceeded` if
    /// it is over `maxBytes`, and the client's typed errors.
    package func open(_ object: S3Object, maxBytes: Int, firstRead: Int = 64 << 10) throws -> HTTPRangeSource {
        let source = try HTTPRangeSource(S3ObjectFetcher(client: self, object: object, maxBytes: maxBytes), firstRead: firstRead)
        guard source.count <= maxBytes else {
            throw FlipbookError(.limitExceeded, "\(object) is \(source.count) bytes, over the limit of \(maxBytes) bytes")
        }
        return source
    }
}
