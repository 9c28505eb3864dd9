import Flipbook
import NIOCore

/// What to make of which file. Hashable and part of the cache key (with the file's identity and the
/// Flipbook version), so two requests that would produce the same bytes share one job and one entry.
public struct DerivativeRequest: Sendable, Hashable {
    /// The operation and its options.
    public enum Operation: Sendable, Hashable {
        /// Looping silent H.264 MP4 of an animation (GIF); `maxSize` caps the longer side, never upscales.
        case mp4(maxSize: Int?)
        /// Still thumbnail; of a video or animation, its poster.
        case thumb(ThumbnailRequest)
        /// A video's poster (a GIF's first frame); of a still, its thumbnail.
        case poster(ThumbnailRequest)
        /// Animated preview MP4 of a video (of a GIF: its MP4), longer side `size`.
        case preview(size: Int)
        /// The WebVTT file of a storyboard.
        case storyboardVTT
        /// Sheet N of a storyboard (JPEG).
        case storyboardSheet(Int)
        /// The source bytes themselves.
        case original

        /// The job kind counted in metrics: mp4, thumb, poster, preview, storyboard or original.
        public var kind: String {
            switch self {
            case .mp4: "mp4"
            case .thumb: "thumb"
            case .poster: "poster"
            case .preview: "preview"
            case .storyboardVTT, .storyboardSheet: "storyboard"
            case .original: "original"
            }
        }

        /// A stable text form for disk-cache keys (never Swift's `hashValue`, which changes per process).
        var keyText: String {
            func thumb(_ r: ThumbnailRequest) -> String {
                // keepProfile only when set, so that every key written before it was spelled stays the same.
                "\(r.maxPixelSize),\(r.fit),\(r.upscale),\(r.quality),\(r.format.rawValue),\(r.frameIndex)"
                    + (r.keepProfile ? ",keep-profile" : "")
            }
            switch self {
            case .mp4(nil): return "mp4:-"
            case .mp4(let s?): return "mp4:\(s)"
            case .thumb(let r): return "thumb:\(thumb(r))"
            case .poster(let r): return "poster:\(thumb(r))"
            case .preview(let s): return "preview:\(s)"
            case .storyboardVTT: return "storyboard-vtt"
            case .storyboardSheet(let n): return "storyboard-sheet:\(n)"
            case .original: return "original"
            }
        }
    }

    /// The file, relative to the configured root, as decoded path segments (no "", ".", ".." or "/"
    /// inside a segment; `DerivativeService` rejects them again). Empty when `url` names the source.
    public var segments: [String]
    /// An `http` or `https` URL to fetch the source from instead of the root, through the fetch guard of
    /// `Configuration.remoteSources` (a service without one refuses it with `fetch-refused`). Default nil.
    public var url: String?
    /// What to make of the file.
    public var operation: Operation

    /// A request for `operation` on the file at `segments` under the root.
    public init(segments: [String], operation: Operation) {
        self.segments = segments
        self.operation = operation
    }

    /// A request for `operation` on the source at `url` (http or https), fetched by ranges.
    public init(url: String, operation: Operation) {
        self.segments = []
        self.url = url
        self.operation = operation
    }

    /// A request for `operation` on `path` ("a/b.gif"), split on "/".
    public init(path: String, operation: Operation) {
        self.init(segments: path.split(separator: "/", omittingEmptySubsequences: false).map(String.init),
                  operation: operation)
    }
}

/// A finished derivative: its bytes in one shared buffer (slices of it are zero-copy), what they are, and a
/// strong validator.
public struct Derivative: Sendable {
    /// The whole derivative. `bytes.getSlice(at:length:)` shares the storage: serving a range copies nothing.
    /// Empty when the bytes are in `file` (only `DerivativeService.cachedEntry` returns such a derivative).
    public var bytes: ByteBuffer
    /// MIME type, e.g. "video/mp4".
    public var contentType: String
    /// Strong entity tag, quoted: the first 128 bits of the content's SHA-256, in hex.
    public var etag: String
    /// Whether it came from a cache (memory or disk) rather than a job run for this request.
    public var cache: CacheOutcome
    /// The disk-cache object holding the bytes, instead of `bytes`, for derivatives of at least
    /// `Configuration.sendfileMinimumBytes`: a server sends ranges of it with `sendfile`.
    package var file: CachedFile?
    /// Size in bytes.
    public var size: Int { file?.size ?? bytes.readableBytes }

    package init(bytes: ByteBuffer, contentType: String, etag: String, cache: CacheOutcome, file: CachedFile? = nil) {
        self.bytes = bytes
        self.contentType = contentType
        self.etag = etag
        self.cache = cache
        self.file = file
    }

    /// Where a derivative came from, for logs and metrics.
    public enum CacheOutcome: String, Sendable {
        /// From the memory cache; from the disk cache; made by a job (or joined one in flight).
        case memory, disk, miss
    }
}
