import Flipbook
import Foundation

/// One source's outcome, the same from `flipbook ingest` and `flipbook worker`: what the bytes are, their
/// placeholders, the derivatives written, or the error. Encoded as one JSON object with every key present
/// (`null` where a field does not apply) and keys sorted, so the same inputs give the same bytes.
public struct IngestResult: Sendable, Equatable, Codable {
    /// The source as it was named (a path, or a job's `source`).
    public var source: String
    /// Hex SHA-256 of the source's bytes; nil if it could not be read.
    public var sha256: String?
    /// The source's size in bytes.
    public var bytes: Int?
    /// `MediaType`'s name (`jpeg`, `gif`, `mp4`, ...).
    public var type: String?
    /// Upright width in pixels (after EXIF orientation or a video's rotation).
    public var width: Int?
    /// Upright height in pixels.
    public var height: Int?
    /// The EXIF orientation as stored (1-8), nil where the format has none.
    public var orientation: Int?
    /// An animation's or a video's duration.
    public var durationMs: Int?
    /// Frames of an animation (1 for a still); a video's frame count when its container says.
    public var frames: Int?
    /// An animation's loop count (0: forever); nil if it has none.
    public var loopCount: Int?
    /// Whether the pixels carry alpha.
    public var hasAlpha: Bool?
    /// ThumbHash and BlurHash; nil for the `probe` recipe and on failure.
    public var placeholder: Placeholder?
    /// The files written, in recipe order.
    public var derivatives: [OutputFile]
    /// The recipe that ran.
    public var recipe: String
    /// The Flipbook that made it (`FlipbookVersion.current`).
    public var flipbookVersion: String
    /// Why it failed; nil on success.
    public var error: Failure?
    /// What the decoders recovered from, in their own words, as `flipbook thumb` prints them (a source cut
    /// short under a recipe that accepts truncated sources, a JPEG with stray bytes); nil when there was none.
    public var warnings: [String]?

    /// One written file.
    public struct OutputFile: Sendable, Equatable, Codable {
        /// The recipe's name for it (storyboard sheets: `<name>-sheet-N`).
        public var name: String
        /// Relative to the output root.
        public var path: String
        /// MIME type, e.g. image/webp, video/mp4, text/vtt; charset=utf-8.
        public var contentType: String
        /// Its size.
        public var bytes: Int
        /// Hex SHA-256 of its bytes.
        public var sha256: String
        /// Pixel width (nil for a WebVTT file).
        public var width: Int?
        /// Pixel height (nil for a WebVTT file).
        public var height: Int?
        /// For MP4s and a storyboard's WebVTT: the duration it covers.
        public var durationMs: Int?
        /// Where it is when the output is not a folder on this machine: its `s3://` URL (absent otherwise).
        public var url: String?

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(path, forKey: .path)
            try c.encode(contentType, forKey: .contentType)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(sha256, forKey: .sha256)
            try c.encode(width, forKey: .width)
            try c.encode(height, forKey: .height)
            try c.encode(durationMs, forKey: .durationMs)
            try c.encodeIfPresent(url, forKey: .url)
        }
    }

    /// A typed error's stable code (`FlipbookError.Code`) and its message.
    public struct Failure: Sendable, Equatable, Codable {
        /// `FlipbookError.Code`'s stable name, e.g. `unknown-format`.
        public var code: String
        /// One sentence for people, with the C library's own words when there are some.
        public var message: String
        /// The HTTP status a remote source was answered with, when that was the failure (`fetch-failed`);
        /// absent otherwise. A worker retries 5xx and never 4xx.
        public var httpStatus: Int?

        public init(code: String, message: String, httpStatus: Int? = nil) {
            self.code = code
            self.message = message
            self.httpStatus = httpStatus
        }
    }

    /// A result that carries only `error`.
    public init(source: String, recipe: String, error: any Error) {
        self.source = source
        self.recipe = recipe
        derivatives = []
        flipbookVersion = FlipbookVersion.current
        let typed = error as? FlipbookError
        // A fetch's status travels in the error's context as "http NNN" (FlipbookStorage's fetchers).
        let status = typed?.context.flatMap { $0.hasPrefix("http ") ? Int($0.dropFirst(5).prefix(3)) : nil }
        self.error = Failure(code: typed?.code.rawValue ?? "error", message: typed?.description ?? String(describing: error), httpStatus: status)
    }

    init(source: String, recipe: String) {
        self.source = source
        self.recipe = recipe
        derivatives = []
        flipbookVersion = FlipbookVersion.current
    }

    /// Whether it failed.
    public var failed: Bool { error != nil }

    /// One line of JSON (no newline inside).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every field is a plain value: encoding cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(source, forKey: .source)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(type, forKey: .type)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(orientation, forKey: .orientation)
        try c.encode(durationMs, forKey: .durationMs)
        try c.encode(frames, forKey: .frames)
        try c.encode(loopCount, forKey: .loopCount)
        try c.encode(hasAlpha, forKey: .hasAlpha)
        try c.encode(placeholder, forKey: .placeholder)
        try c.encode(derivatives, forKey: .derivatives)
        try c.encode(recipe, forKey: .recipe)
        try c.encode(flipbookVersion, forKey: .flipbookVersion)
        try c.encode(error, forKey: .error)
        try c.encode(warnings, forKey: .warnings)
    }
}

