import Flipbook
import FlipbookStorage

/// An S3 prefix as an ingest output (`-o s3://BUCKET/PREFIX/`): one object per derivative and result, each a
/// PutObject (or an aborted-on-failure multipart upload) with its Content-Type and `Cache-Control`.
package struct S3Output: IngestOutput {
    package let client: S3Client
    package let bucket: String
    /// Empty or ending in "/".
    package let prefix: String
    /// `Cache-Control` of every object written. Default nil (none).
    package var cacheControl: String?

    package init(client: S3Client, bucket: String, prefix: String, cacheControl: String? = nil) {
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        self.cacheControl = cacheControl
    }

    package func location(of relative: String) -> String? { "s3://\(bucket)/\(prefix)\(relative)" }

    package func write(_ bytes: [UInt8], to relative: String, contentType: String) throws {
        try client.put(S3Object(bucket: bucket, key: prefix + relative), bytes: bytes, contentType: contentType, cacheControl: cacheControl)
    }

    package func read(_ relative: String) -> [UInt8]? {
        guard let answer = try? client.get(S3Object(bucket: bucket, key: prefix + relative), range: nil, ifMatch: nil, limit: 16 << 20),
              answer.status == 200
        else { return nil }
        return Array(answer.body.readableBytesView)
    }

    package func exists(_ relative: String) -> Bool {
        (try? client.head(S3Object(bucket: bucket, key: prefix + relative))) != nil
    }
}
