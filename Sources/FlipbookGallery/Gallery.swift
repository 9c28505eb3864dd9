import Dispatch
import Flipbook
import FlipbookStorage
import Synchronization

/// The gallery's server-side half: `GET /list/<dir>` (a JSON page of a folder's media and subfolders) and
/// `GET /gallery/<dir>` (the page that shows them). HTTP-free, so any server can mount it; the Hummingbird
/// adapter lives in FlipbookServer. Every URL it emits goes through `sign` (identity when signing is off).
///
/// Costs: a listing reads the folder's names once per change of the folder (kept, keyed by its device,
/// inode and mtime), then stats, resolves and probes (headers only, cached by file identity) just the
/// entries of the page asked for.
public final class Gallery: Sendable {
    /// How the gallery behaves. Every property documents its default.
    public struct Configuration: Sendable {
        /// The served folder; nothing outside it is listed. No default.
        public var root: String
        /// Items per listing page when `limit` is absent. Default 60.
        public var defaultLimit = 60
        /// Largest `limit` accepted (400 beyond). Default 200.
        public var maxLimit = 200
        /// Most entries one listing request examines, so a folder of non-media files answers quickly with
        /// a short page and a cursor instead of probing everything. Default 4,000.
        public var maxScan = 4_000
        /// Size (longest side, px) asked of posters and previews: tiles are at most 240 CSS px wide, so
        /// 320 stays sharp at 1.33x. Default 320.
        public var tileSize = 320
        /// Probes kept in memory (by file identity). Default 50,000.
        public var probeCacheEntries = 50_000
        /// Give each item a ThumbHash (`thumbhash`), which the page paints until the poster arrives. Costs one
        /// small decode per file, once (kept with its probe). Default true.
        public var placeholders = true
        /// Library limits for probing. Default `Limits()`.
        public var limits = Limits()
        /// Turns a request target into the URL to emit (appends `sig=` when signing). Default: unchanged.
        public var sign: @Sendable (String) -> String = { $0 }
        /// The S3 prefix to list instead of the folder `root` (a server whose root is `s3://BUCKET/PREFIX/`):
        /// folders are the prefix's "/"-delimited common prefixes, files its keys, listed with ListObjectsV2 and
        /// probed by ranged reads (cached by ETag). Default nil.
        package var store: S3Store?

        /// A configuration serving `root` with every other default.
        public init(root: String) { self.root = root }
    }

    /// One entry of a listing.
    public struct Item: Sendable, Equatable {
        /// `folder`, `animation` (GIF, animated WebP or APNG: plays `/mp4`), `video` (plays `/preview`) or
        /// `image` (a still; no video).
        public var kind: String
        public var name: String
        /// Signed `/poster/...` (or `/thumb/...` for stills), nil for folders.
        public var poster: String?
        /// Signed `/mp4/...` or `/preview/...`, nil for stills and folders.
        public var video: String?
        /// Signed link a tile opens: `/gallery/<sub>` for folders, `/original/<path>` for media.
        public var link: String
        public var width: Int?
        public var height: Int?
        public var durationMs: Int?
        public var frames: Int?
        /// Base64 ThumbHash of the poster's picture, nil for folders (and when placeholders are off).
        public var thumbhash: String?
    }

    /// A page of a listing and the cursor of the next, if any.
    public struct Listing: Sendable {
        public var items: [Item]
        public var next: String?
        /// The signed `/list/...` target of the next page, if any.
        public var nextURL: String?
    }

    public let configuration: Configuration
    /// The root with symlinks resolved.
    let realRoot: String
    let probes: ProbeCache
    private let folders = Mutex<[String: (FileSystem.Status, [[UInt8]])]>([:])

    /// A gallery of `configuration.root`. Throws `GalleryError` 404 if the root is not a folder.
    public init(configuration: Configuration) throws(GalleryError) {
        self.configuration = configuration
        if configuration.store != nil {
            realRoot = ""
        } else {
            guard let real = realPath(configuration.root), FileSystem.status(real)?.isDirectory == true else {
                throw GalleryError.notFound("the root \(configuration.root) is not a folder")
            }
            realRoot = real == "/" ? "" : real
        }
        probes = ProbeCache(capacity: configuration.probeCacheEntries, limits: configuration.limits,
                            placeholders: configuration.placeholders)
    }

    // MARK: - Listing

    /// A page of the folder `segments` (decoded path segments under the root; empty for the root) after
    /// `cursor`, at most `limit` items, sorted by name (bytewise UTF-8). Dotfiles, entries that resolve
    /// outside the root or to a hidden entry, non-media files and files the library cannot probe are left
    /// out. Blocking file I/O: call it off the event loop.
    public func list(segments: [String], cursor: String?, limit: Int?) throws(GalleryError) -> Listing {
        let limit = limit ?? configuration.defaultLimit
        guard (1...configuration.maxLimit).contains(limit) else {
            throw GalleryError(400, "bad-parameter", "limit must be a whole number from 1 to \(configuration.maxLimit)")
        }
        var after: [UInt8]?
        if let cursor {
            guard let name = Cursor.decode(cursor) else { throw GalleryError(400, "bad-cursor", "the cursor was not made by this server") }
            after = name
        }
        let names: [[UInt8]]
        let make: @Sendable ([UInt8]) -> Item?
        if let store = configuration.store {
            let entries = try objectEntries(store, segments: segments)
            names = entries.map(\.name)
            let objects = Dictionary(entries.map { ($0.name, $0.object) }, uniquingKeysWith: { first, _ in first })
            make = { [self] raw in objectItem(named: raw, object: objects[raw] ?? nil, in: segments, store: store) }
        } else {
            let folder = try resolveFolder(segments)
            names = try sortedNames(folder)
            make = { [self] raw in item(named: raw, in: segments, folder: folder) }
        }
        var index = 0
        if let after { index = Self.firstIndex(after: after, in: names) }
        var items: [Item] = []
        var scanned = 0
        var lastExamined: [UInt8]?
        // In batches of at most the items still wanted, examined in parallel (a cold entry is a probe and a
        // small decode for its placeholder), kept in name order; a batch never overshoots the limit.
        while index < names.count, items.count < limit, scanned < configuration.maxScan {
            let batch = Array(names[index..<min(names.count, index + min(limit - items.count, configuration.maxScan - scanned))])
            let found = Mutex([Item?](repeating: nil, count: batch.count))
            DispatchQueue.concurrentPerform(iterations: batch.count) { i in
                let made = make(batch[i])
                found.withLock { $0[i] = made }
            }
            items += found.withLock { $0.compactMap { $0 } }
            index += batch.count
            scanned += batch.count
            lastExamined = batch.last
        }
        guard index < names.count, let lastExamined else { return Listing(items: items, next: nil, nextURL: nil) }
        let next = Cursor.after(lastExamined)
        let nextURL = configuration.sign(Self.listTarget(segments) + "?cursor=\(next)&limit=\(limit)")
        return Listing(items: items, next: next, nextURL: nextURL)
    }

    /// `/list/<encoded segments>` (or `/list/` for the root).
    static func listTarget(_ segments: [String]) -> String { "/list/" + URLPath.encode(segments) }

    /// `/gallery/<encoded segments>` (or `/gallery/` for the root).
    static func galleryTarget(_ segments: [String]) -> String { "/gallery/" + URLPath.encode(segments) }

    /// Index of the first name sorting after `name`.
    static func firstIndex(after name: [UInt8], in names: [[UInt8]]) -> Int {
        var low = 0, high = names.count
        while low < high {
            let mid = (low + high) / 2
            if names[mid].lexicographicallyPrecedes(name) || names[mid] == name { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The real path of the folder, checked: inside the root, every segment visible, a directory.
    func resolveFolder(_ segments: [String]) throws(GalleryError) -> String {
        for segment in segments where segment.isEmpty || segment.hasPrefix(".") || segment.contains("/") || segment.contains("\0") {
            throw GalleryError.notFound()
        }
        let joined = realRoot + "/" + segments.joined(separator: "/")
        guard let real = realPath(joined), let relative = relativeToRoot(real), visible(relative),
              FileSystem.status(real)?.isDirectory == true
        else { throw GalleryError.notFound() }
        return real
    }

    /// `path` relative to the root ("" for the root itself), or nil if it is outside.
    func relativeToRoot(_ path: String) -> String? {
        if path == realRoot || (realRoot.isEmpty && path == "/") { return "" }
        let prefix = realRoot + "/"
        guard path.hasPrefix(prefix) else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    /// Whether no component of a root-relative path is hidden (starts with '.').
    func visible(_ relative: String) -> Bool {
        !relative.split(separator: "/").contains { $0.hasPrefix(".") }
    }

    /// The folder's names (dotfiles and names that are not UTF-8 left out), sorted bytewise; re-read only
    /// when the folder itself changed (device, inode or mtime).
    func sortedNames(_ folder: String) throws(GalleryError) -> [[UInt8]] {
        guard let status = FileSystem.status(folder) else { throw GalleryError.notFound() }
        if let (known, names) = folders.withLock({ $0[folder] }), known == status { return names }
        guard let raw = FileSystem.names(folder) else { throw GalleryError.notFound("the folder cannot be read") }
        let names = raw.filter { $0.first != 0x2E && String(validating: $0, as: UTF8.self) != nil }
            .sorted { $0.lexicographicallyPrecedes($1) }
        folders.withLock { cache in
            if cache.count >= 1_024 { cache.removeAll(keepingCapacity: true) }
            cache[folder] = (status, names)
        }
        return names
    }

    /// The item for `name` in `folder`, or nil when it is not to be listed.
    func item(named raw: [UInt8], in segments: [String], folder: String) -> Item? {
        guard let name = String(validating: raw, as: UTF8.self) else { return nil }
        guard let real = realPath(folder + "/" + name), let relative = relativeToRoot(real), !relative.isEmpty,
              visible(relative), let status = FileSystem.status(real)
        else { return nil }
        let path = segments + [name]
        if status.isDirectory {
            return Item(kind: "folder", name: name, link: configuration.sign(Self.galleryTarget(path)))
        }
        guard status.isRegular else { return nil }
        let key = ProbeCache.Key(device: status.device, inode: status.inode, size: status.size, modifiedNs: status.modifiedNs)
        guard let entry = probes.entry(path: real, key: key) else { return nil }
        return item(name: name, path: path, probe: entry)
    }

    /// The item of a media file named `name` at `path` (the folder's segments and the name), whose probe is
    /// `entry`: its kind, signed poster, video and link URLs, and what the probe says.
    func item(name: String, path: [String], probe entry: ProbeCache.Entry) -> Item {
        let encoded = URLPath.encode(path)
        let sign = configuration.sign
        let info = entry.info
        let size = configuration.tileSize
        let kind: String
        var video: String?
        var poster = sign("/poster/\(encoded)?size=\(size)")
        if info.type.isVideo {
            kind = "video"
            video = sign("/preview/\(encoded)?size=\(size)")
        } else if (info.frames ?? 1) > 1 {
            kind = "animation"
            video = sign("/mp4/\(encoded)?size=\(size)")
        } else {
            kind = "image"
            poster = sign("/thumb/\(encoded)?size=\(size)")
        }
        return Item(kind: kind, name: name, poster: poster, video: video, link: sign("/original/\(encoded)"),
                    width: info.width, height: info.height, durationMs: info.durationMs, frames: info.frames,
                    thumbhash: entry.thumbhash)
    }
}

extension Gallery.Listing {
    /// `{"items": [...], "next": cursor|null, "nextUrl": target|null}`; each item has every key of
    /// `Gallery.Item`, `null` where unknown.
    public var json: String {
        func number(_ v: Int?) -> String { v.map(String.init) ?? "null" }
        func string(_ v: String?) -> String { v.map(JSON.string) ?? "null" }
        var out = "{\"items\":["
        for (i, item) in items.enumerated() {
            if i > 0 { out += "," }
            out += "{\"name\":\(JSON.string(item.name)),\"kind\":\(JSON.string(item.kind)),\"poster\":\(string(item.poster)),"
            out += "\"video\":\(string(item.video)),\"link\":\(JSON.string(item.link)),\"width\":\(number(item.width)),"
            out += "\"height\":\(number(item.height)),\"durationMs\":\(number(item.durationMs)),\"frames\":\(number(item.frames)),"
            out += "\"thumbhash\":\(string(item.thumbhash))}"
        }
        out += "],\"next\":\(string(next)),\"nextUrl\":\(string(nextURL))}"
        return out
    }
}
