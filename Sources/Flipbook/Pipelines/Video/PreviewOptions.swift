/// How to build an animated preview. Every property documents its default.
public struct PreviewOptions: Sendable {
    /// Segments spread across the video. Default 5.
    public var segments = 5
    /// Length of each segment, in seconds. Default 1.
    public var segmentLength = 1.0
    /// Longer side of the clip, in pixels. Default 320.
    public var size = 320
    /// Cap on frames per second (nil: the source's own frames, up to 50 for GIF). Default nil.
    public var fps: Double?
    /// Default MP4.
    public var format = PreviewFormat.mp4
    /// Encoder settings for MP4 and WebM (H.264, crf 23, preset medium by default). Its `container` is
    /// not used: `format` decides.
    public var video = VideoConversionOptions()
    /// Animated WebP settings (quality 75 by default).
    public var webp = WebPPreviewOptions()
    /// Animated GIF settings (256 colours, Floyd-Steinberg by default).
    public var gif = GIFPreviewOptions()

    /// Every option at its documented default.
    public init() {}
}

/// Short segments of a video stitched into one silent looping clip with continuous timestamps: the
/// kind of preview galleries play on hover, as a video, an animated WebP or a GIF.
extension PreviewOptions {
    func validate() throws {
        guard segments > 0, segmentLength > 0, size > 1 else {
            throw FlipbookError(.invalidArgument, "segments, segment length and size must be positive")
        }
        if let fps, !(fps > 0) { throw FlipbookError(.invalidArgument, "fps must be positive") }
    }
}
