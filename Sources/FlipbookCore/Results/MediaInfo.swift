/// What `probe` reports about an input. Fields are nil where unknown or meaningless.
public struct MediaInfo: Sendable, Equatable {
    /// The type sniffed from the bytes.
    public var type: MediaType
    /// Displayed size, after orientation.
    public var width: Int?
    /// Height in pixels as displayed (after orientation); nil if unknown.
    public var height: Int?
    /// EXIF orientation 1-8 (stills), or 1 when absent.
    public var orientation: Int?
    /// Frames (animations and videos); nil for stills or when unknown.
    public var frames: Int?
    /// Duration in ms (animations and videos); nil for stills.
    public var durationMs: Int?
    /// 0 means forever; nil means no loop information (plays once).
    public var loopCount: Int?
    /// Whether the picture has an alpha channel; nil if unknown.
    public var hasAlpha: Bool?
    /// libav's name for the codec: "mjpeg", "png", "webp", "gif", "h264", ...
    public var codec: String?

    /// Facts of a `type` input, all unknown until set.
    public init(type: MediaType) { self.type = type }
}
