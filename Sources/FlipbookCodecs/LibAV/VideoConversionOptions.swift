/// How to convert. Every property documents its default.
public struct VideoConversionOptions: Sendable {
    /// Constant rate factor (lower is better quality, bigger): the one used when the quality floor holds,
    /// and where `targetSSIM`'s search starts. Default 23, as x264's; but with `automaticTuning` (the
    /// default) an H.264 conversion at the default preset without a floor or target uses `GIFTuning`'s crf
    /// (27, 26 or 25 by the kind of picture its first frame holds) and x264 settings instead.
    public var crf = 23
    /// Quality floor for every format. When the video's SSIM against the frames it was made from
    /// (`QualityMeter`) is under this, the file is encoded again at a lower crf (`CRFSearch`, at most three
    /// encodes). nil (the default): `automaticFloor` decides. Ignored when `targetSSIM` is set.
    public var minimumSSIM: Double?
    /// With no `minimumSSIM`, use the source format's floor, `CRFSearch.defaultFloor(for:)`: 0.97 for
    /// animated WebP and APNG, none for GIF (`GIFTuning`'s settings hold the peer's quality without one,
    /// and measuring costs a decode). false: `crf` as it is. Default true.
    public var automaticFloor = true
    /// Use Flipbook's own crf, chroma and analysis settings (`GIFTuning`) for H.264 at the default preset
    /// with no `minimumSSIM` or `targetSSIM` (animated WebP and APNG have a default floor, so they start
    /// from `crf`). false: `crf` with x264's settings (the CLI's `--crf`). Default true.
    public var automaticTuning = true
    /// Quality target: the largest crf (1-51) whose SSIM, measured as for `minimumSSIM`, is at least this,
    /// searched per file (bisection, at most six encodes). nil (the default): no search.
    public var targetSSIM: Double?
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
    /// More x264 settings ("key=value:key=value"), after Flipbook's own, for measuring alternatives
    /// (`bench/gif_sweep.py`). Default nil.
    public var x264Params: String?
    /// Decoder limits (canvas, frames, total pixels, cancellation).
    public var decode = GIFDecodeOptions()

    /// Every option at its documented default.
    public init() {}
}
