import Flipbook
import Synchronization

/// Header probes of listed files, kept by file identity (device, inode, size, mtime in ns): a folder of
/// 2,000 links to a handful of files costs a handful of probes, and a second listing of an unchanged folder
/// costs none. Bounded by entry count (oldest use evicted first); failures are kept too, so a non-media
/// file is sniffed once. Thread-safe.
final class ProbeCache: Sendable {
    struct Key: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedNs: Int64
    }

    private struct State {
        var entries: [Key: (info: MediaInfo?, tick: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Most probes kept (each is ~100 bytes). Default 50,000.
    let capacity: Int
    let limits: Limits

    init(capacity: Int = 50_000, limits: Limits) {
        self.capacity = capacity
        self.limits = limits
    }

    /// The probe of the file at `path` whose identity is `key`; nil if it is not media the library reads.
    /// A miss reads headers only (libavformat for video, the record stream for GIF).
    func info(path: String, key: Key) -> MediaInfo? {
        if let hit = state.withLock({ s -> MediaInfo?? in
            guard let entry = s.entries[key] else { return nil }
            s.tick += 1
            s.entries[key] = (entry.info, s.tick)
            return .some(entry.info)
        }) {
            return hit
        }
        let info = try? MediaInput(path: path, limits: limits).probe()
        let usable = info.flatMap { $0.type == .unknown ? nil : $0 }
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
