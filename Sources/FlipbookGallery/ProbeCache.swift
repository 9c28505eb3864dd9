import Flipbook
import FlipbookIngest
import Synchronization

/// Header probes of listed files and their ThumbHash placeholders, kept by file identity (device, inode,
/// size, mtime in ns): a folder of 2,000 links to a handful of files costs a handful of probes, and a second
/// listing of an unchanged folder costs none. Bounded by entry count (oldest use evicted first); failures
/// are kept too, so a non-media file is sniffed once. Thread-safe.
final class ProbeCache: Sendable {
    struct Key: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedNs: Int64
    }

    /// What a listing shows of a file before its poster arrives.
    struct Entry: Sendable {
        var info: MediaInfo
        /// The ThumbHash (base64) of its first frame or poster (`Placeholder`, the code ingestion uses); nil
        /// when placeholders are off or the pixels could not be decoded.
        var thumbhash: String?
    }

    private struct State {
        var entries: [Key: (entry: Entry?, tick: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Most probes kept (each is ~100 bytes). Default 50,000.
    let capacity: Int
    let limits: Limits
    let placeholders: Bool

    init(capacity: Int = 50_000, limits: Limits, placeholders: Bool = true) {
        self.capacity = capacity
        self.limits = limits
        self.placeholders = placeholders
    }

    /// The probe (and placeholder) of the file at `path` whose identity is `key`; nil if it is not media the
    /// library reads. A miss reads headers (libavformat for video, the record stream for GIF) and, with
    /// placeholders on, decodes one small image: a still shrunk on load, an animation's first frame, a
    /// video's poster.
    func entry(path: String, key: Key) -> Entry? {
        entry(key: key) { [limits] in try MediaInput(path: path, limits: limits) }
    }

    /// The same for a source `open` opens (an S3 object read by ranges), whose identity is `key`.
    func entry(key: Key, open: () throws -> MediaInput) -> Entry? {
        if let hit = state.withLock({ s -> Entry?? in
            guard let cached = s.entries[key] else { return nil }
            s.tick += 1
            s.entries[key] = (cached.entry, s.tick)
            return .some(cached.entry)
        }) {
            return hit
        }
        let usable: Entry? = (try? open()).flatMap { input in
            guard let info = try? input.probe(), info.type != .unknown else { return nil }
            let thumbhash = placeholders ? (try? Placeholder(input: input))?.thumbhash : nil
            return Entry(info: info, thumbhash: thumbhash)
        }
        state.withLock { s in
            s.tick += 1
            s.entries[key] = (usable, s.tick)
            if s.entries.count > capacity {
                // Evict the older half in one pass: amortised O(1) per insert.
                let cut = s.entries.values.map(\.tick).sorted()[s.entries.count / 2]
                s.entries = s.entries.filter { $0.value.tick >= cut }
            }
        }
        return usable
    }

    /// Entries held now (for tests).
    var count: Int { state.withLock { $0.entries.count } }
}
