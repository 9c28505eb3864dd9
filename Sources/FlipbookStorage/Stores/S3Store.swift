import FlipbookCore
import Foundation

/// An S3 prefix as a store (`s3://BUCKET/PREFIX/`): listed with ListObjectsV2, entries are HEADs, sources are
/// objects read by ranges. A key's relative name is what follows the prefix.
package struct S3Store: SourceStore {
    package let client: S3Client
    package let bucket: String
    /// Empty (the whole bucket) or ending in "/".
    package let prefix: String

    package init(client: S3Client, bucket: String, prefix: String) {
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    package var root: String { "s3://\(bucket)/\(prefix)" }

    package func location(_ relative: String) -> String { "s3://\(bucket)/\(prefix)\(relative)" }

    package func list(includeHidden: Bool) throws -> [StoreEntry] {
        try client.list(bucket: bucket, prefix: prefix).objects.compactMap { object in
            let relative = String(object.key.dropFirst(prefix.count))
            // A "folder marker" (a key ending in "/") is not a source.
            guard !relative.isEmpty, !relative.hasSuffix("/") else { return nil }
            if !includeHidden, relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { return nil }
            return StoreEntry(relative: relative, size: object.size, identity: object.etag,
                              modifiedNs: object.lastModified.flatMap(Self.nanoseconds(iso8601:)))
        }
    }

    package func entry(_ relative: String) throws -> StoreEntry {
        // S3 keys are names, not paths: "a//b" and "../x" are keys like any other, nothing to climb out of.
        guard !relative.isEmpty, !relative.utf8.contains(0) else { throw FlipbookError(.invalidArgument, "an empty key or one with NUL") }
        let info = try client.head(S3Object(bucket: bucket, key: prefix + relative))
        return StoreEntry(relative: relative, size: info.size, identity: info.etag,
                          modifiedNs: info.lastModified.flatMap(Self.nanoseconds(httpDate:)))
    }

    package func open(_ entry: StoreEntry, maxBytes: Int) throws -> any ByteSource {
        try client.open(S3Object(bucket: bucket, key: prefix + entry.relative), maxBytes: maxBytes)
    }

    /// A listing's `2026-11-28T20:14:00.000Z`.
    static func nanoseconds(iso8601 text: String) -> Int? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) else { return nil }
        return Int(date.timeIntervalSince1970 * 1e9)
    }

    /// A HEAD's `Sat, 28 Nov 2026 20:14:00 GMT`.
    static func nanoseconds(httpDate text: String) -> Int? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970 * 1e9) }
    }
}
