import Flipbook
import FlipbookStorage

/// The gallery of a server whose root is an S3 prefix (issue 43): a folder is a "/"-delimited prefix, listed
/// with ListObjectsV2 (one request per 1,000 entries, on every listing: S3 has no mtime of a folder to keep a
/// listing by), and each object is probed by ranged reads of its first bytes, cached by its key and ETag, so
/// an unchanged object is probed once and a replaced one again.
extension Gallery {
    /// One entry of an S3 "folder": a name below it, and its object (nil for a sub-folder).
    struct ObjectEntry: Sendable {
        var name: [UInt8]
        var object: S3ObjectInfo?
    }

    /// The entries of the folder `segments` under `store`, sorted by name (bytewise, as S3 lists keys), hidden
    /// names and folder markers left out. 404 for a hidden or empty folder (other than the root); a listing
    /// that fails is 502 with the store's error code.
    func objectEntries(_ store: S3Store, segments: [String]) throws(GalleryError) -> [ObjectEntry] {
        for segment in segments where segment.isEmpty || segment.hasPrefix(".") || segment.contains("/") || segment.contains("\0") {
            throw GalleryError.notFound()
        }
        let folder = store.prefix + segments.map { $0 + "/" }.joined()
        let listing: S3Listing
        do {
            listing = try store.client.list(bucket: store.bucket, prefix: folder, delimiter: "/")
        } catch let error as FlipbookError {
            if error.code == .notFound { throw GalleryError.notFound() }
            throw GalleryError(502, error.code.rawValue, error.message)
        } catch {
            throw GalleryError(502, "fetch-failed", "\(error)")
        }
        let cut = folder.utf8.count
        func entryName(_ key: String) -> [UInt8]? {
            var bytes = Array(Array(key.utf8).dropFirst(cut))
            if bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
            guard !bytes.isEmpty, bytes.first != UInt8(ascii: "."), !bytes.contains(UInt8(ascii: "/")) else { return nil }
            return bytes
        }
        var entries: [ObjectEntry] = []
        for prefix in listing.prefixes {
            if let name = entryName(prefix) { entries.append(ObjectEntry(name: name, object: nil)) }
        }
        for object in listing.objects where !object.key.hasSuffix("/") {
            if let name = entryName(object.key) { entries.append(ObjectEntry(name: name, object: object)) }
        }
        entries.sort { $0.name.lexicographicallyPrecedes($1.name) }
        if !segments.isEmpty && entries.isEmpty { throw GalleryError.notFound() }
        return entries
    }

    /// The item for the entry `raw` of the folder `segments`: a folder, or a media object (probed by ranged
    /// reads, cached by key and ETag); nil when it is not media.
    func objectItem(named raw: [UInt8], object: S3ObjectInfo?, in segments: [String], store: S3Store) -> Item? {
        guard let name = String(validating: raw, as: UTF8.self) else { return nil }
        let path = segments + [name]
        guard let object else { return Item(kind: "folder", name: name, link: configuration.sign(Self.galleryTarget(path))) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (object.key + "|" + object.etag).utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        // Device all ones: no local file has it, so an object's probe never meets a file's.
        let key = ProbeCache.Key(device: .max, inode: hash, size: Int64(object.size), modifiedNs: 0)
        let limits = configuration.limits
        let location = S3Object(bucket: store.bucket, key: object.key)
        guard let entry = probes.entry(key: key, open: {
            MediaInput(source: try store.client.open(location, maxBytes: limits.maxInputBytes), name: location.description, limits: limits)
        }) else { return nil }
        return item(name: name, path: path, probe: entry)
    }
}
