/// What a conversion produced.
public struct VideoConversionResult: Sendable {
    /// The encoded video file.
    public var data: [UInt8]
    /// Size of the input file.
    public var inputBytes: Int
    /// Size of `data`.
    public var outputBytes: Int { data.count }
    /// Total duration: the sum of the GIF's displayed frame durations.
    public var durationMs: Int
    /// Frames the GIF (or animation) holds.
    public var gifFrames: Int
    /// Frames actually encoded: consecutive identical frames are merged into one longer frame.
    public var encodedFrames: Int
    /// The GIF's loop count (0: forever; nil: no loop extension, plays once). Also in the MP4 as `loop_count`.
    public var loopCount: Int?
    /// Whether the input had transparent pixels (flattened onto `VideoConversionOptions.background`).
    public var hadTransparency: Bool
    /// The picture's true size; the encoded size is padded to even numbers by repeating the last column and row.
    public var width: Int
    /// The picture's true height.
    public var height: Int
    /// The encoded width: `width` rounded up to even (yuv420p needs even sides).
    public var encodedWidth: Int
    /// The encoded height: `height` rounded up to even.
    public var encodedHeight: Int
    /// Input bytes / output bytes.
    public var compressionRatio: Double { data.isEmpty ? 0 : Double(inputBytes) / Double(data.count) }
    /// JPEG of the first frame, when asked for.
    public var poster: [UInt8]?
    /// Decoder warnings (a truncated GIF converts the frames it has).
    public var warnings: [String]
    /// The crf of the encode kept.
    public var crf = 0
    /// The x264 settings of that encode beyond Flipbook's fixed ones (`GIFTuning`'s per-GIF choice and
    /// `VideoConversionOptions.x264Params`), nil when there were none.
    public var x264Params: String?
    /// Its SSIM against the frames it was made from (`QualityMeter`), when measured.
    public var measuredSSIM: Double?
    /// Encodes run to choose the crf (1 without a search).
    public var encodes = 1
}
