/// What `probe` reports about an input. Fields are nil where unknown or meaningless.
public struct MediaInfo: Sendable, Equatable {
    public var type: MediaType
    /// Displayed size, after orientation.
    public var width: Int?
    public var height: Int?
    /// EXIF orientation 1-8 (stills), or 1 when absent.
    public var orientation: Int?
    public var frames: Int?
    public var durationMs: Int?
    /// 0 means forever; nil means no loop information (plays once).
    public var loopCount: Int?
    public var hasAlpha: Bool?
    /// libav's name for the codec: "mjpeg", "png", "webp", "gif", "h264", ...
    public var codec: String?

    /// Facts of a `type` input, all unknown until set.
    public init(type: MediaType) { self.type = type }
}
