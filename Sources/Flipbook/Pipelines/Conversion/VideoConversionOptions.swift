/// How to convert. Every property documents its default.
public struct VideoConversionOptions: Sendable {
    /// Constant rate factor (lower is better quality, bigger). Default 23, as x264's.
    public var crf = 23
    /// Encoder speed preset. Default "medium", as x264's.
    public var preset = "medium"
    /// Scale the longer side down while decoding so that no side of the video (padded to even) is over this
    /// (nil: the GIF's size). Default nil.
    public var maxSize: Int?
    /// Transparent pixels are flattened onto this colour. Default white.
    public var background: (r: UInt8, g: UInt8, b: UInt8) = (255, 255, 255)
    /// Default H.264 (High profile).
    public var codec = VideoCodec.h264
    /// Default MP4.
    public var container = VideoContainer.mp4
    /// Encoder threads. 0 (the default): fixed per file from the frame size (`FrameEncoder.threads`), never
    /// from the machine or the number of parallel conversions, because x264 writes different bytes with
    /// different thread counts and outputs must not depend on `--jobs`.
    public var threads = 0
    /// Also produce a JPEG of the first frame at this quality (nil: no poster). Default nil.
    public var posterQuality: Int?
    /// Decoder limits (canvas, frames, total pixels, cancellation).
    public var decode = GIFDecodeOptions()

    /// Every option at its documented default.
    public init() {}
}
