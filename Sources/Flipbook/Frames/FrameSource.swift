/// What an animation's headers say, read before any pixel is decoded (and before the canvas is allocated).
public struct AnimationInfo: Sendable, Equatable {
    /// `.gif`, `.animatedWebP` or `.apng`.
    public var type: MediaType
    /// The canvas every frame is composited onto.
    public var width: Int
    public var height: Int
    public var frameCount: Int
    /// Each frame's displayed duration in ms (see `AnimationTiming`), in order.
    public var durationsMs: [Int]
    /// The sum of `durationsMs`.
    public var durationMs: Int
    /// 0: forever; nil: the file says nothing (plays once).
    public var loopCount: Int?
    /// Some pixel may be transparent (alpha in the format, a transparent colour, or a first frame smaller
    /// than the canvas).
    public var hasAlpha: Bool
    /// libav's name for the codec: "gif", "webp", "apng".
    public var codec: String
}

/// One composited frame's facts; its pixels are passed beside it.
public struct AnimationFrame: Sendable, Equatable {
    public var index: Int
    /// When the frame appears: the sum of the displayed durations of the frames before it.
    public var presentationTimeMs: Int
    /// How long it is displayed (see `AnimationTiming`).
    public var durationMs: Int
    /// True for the last frame of a damaged file whose data ended inside it.
    public var isPartial: Bool

    public init(index: Int, presentationTimeMs: Int, durationMs: Int, isPartial: Bool = false) {
        self.index = index
        self.presentationTimeMs = presentationTimeMs
        self.durationMs = durationMs
        self.isPartial = isPartial
    }
}

/// A decoded animation, one composited canvas at a time: GIF (`GIFFrameSource`), animated WebP
/// (`WebPFrameSource`) and APNG (`APNGFrameSource`) look the same to the converter, `frames`, thumbnails
/// and previews. Memory is one canvas (plus what the format's disposal needs), whatever the frame count.
public protocol FrameSource: AnyObject {
    /// From the headers, checked against the limits before the source was created.
    var info: AnimationInfo { get }
    /// Problems recovered from while decoding (a truncated file ends with the frames it has).
    var warnings: [String] { get }
    /// Composites the remaining frames in order and calls `body` with each and the canvas (RGBA, straight
    /// alpha, `info.width` x `info.height`), valid only during the call. `body` returns false to stop.
    /// Costs one decode per frame; no per-frame allocation beyond the decoder's own.
    func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws
}

/// Frame-timing rule for every animated format, in one place.
public enum AnimationTiming {
    /// How long a frame is shown for a stored duration in ms: browsers play frames of 10 ms or less for
    /// 100 ms (Chromium's DeferredImageDecoder, Firefox, Safari), the same rule as `GIFTiming`'s <= 1 cs.
    public static func displayedMilliseconds(_ ms: Int) -> Int { ms <= 10 ? 100 : ms }
}

/// Limits of the animation decoders, all checked from headers before allocating. Every property
/// documents its default.
public struct AnimationLimits: Sendable, Equatable {
    /// Largest canvas, in pixels. Default 50 MP (200 MB as RGBA), as GIFs.
    public var maxCanvasPixels = 50_000_000
    /// Most frames. Default 10,000, as GIFs.
    public var maxFrames = 10_000
    /// Longest total displayed duration, in ms. Default 24 hours: GIFs that hold a frame for minutes exist
    /// (a delay can be 655 s), and the work is bounded by frames and pixels; this catches nonsense timing.
    public var maxDurationMs = 86_400_000

    public init(maxCanvasPixels: Int = 50_000_000, maxFrames: Int = 10_000, maxDurationMs: Int = 86_400_000) {
        self.maxCanvasPixels = maxCanvasPixels
        self.maxFrames = maxFrames
        self.maxDurationMs = maxDurationMs
    }

    /// Throws `.limitExceeded` naming the format if the header's numbers are over the limits.
    func check(_ info: AnimationInfo, what: String) throws {
        let (pixels, overflow) = info.width.multipliedReportingOverflow(by: info.height)
        if overflow || pixels > maxCanvasPixels {
            throw FlipbookError(.limitExceeded, "\(what) canvas is \(info.width)x\(info.height), over the \(maxCanvasPixels / 1_000_000) MP limit")
        }
        if info.frameCount > maxFrames {
            throw FlipbookError(.limitExceeded, "\(what) has \(info.frameCount) frames, over the \(maxFrames)-frame limit")
        }
        if info.durationMs > maxDurationMs {
            throw FlipbookError(.limitExceeded, "\(what) lasts \(info.durationMs) ms, over the \(maxDurationMs) ms limit")
        }
    }
}

/// Opens the right frame source for a sniffed type.
public enum FrameSources {
    /// Whether `type` is an animation a `FrameSource` decodes.
    public static func accepts(_ type: MediaType) -> Bool { [.gif, .animatedWebP, .apng].contains(type) }

    /// A frame source for `source`: GIF, animated WebP or APNG (sniffed from its bytes). Reads and checks
    /// the headers; throws `.unsupported` for anything else. `decode` carries the GIF decoder's options
    /// (strictness, cancellation); its canvas and frame limits apply to every format.
    public static func open(_ source: any ByteSource, decode: GIFDecodeOptions = GIFDecodeOptions(),
                            limits: AnimationLimits? = nil) throws -> any FrameSource {
        let limits = limits ?? AnimationLimits(maxCanvasPixels: decode.maxCanvasPixels, maxFrames: decode.maxFrames)
        switch MediaType.sniff(source) {
        case .gif: return try GIFFrameSource(source: source, options: decode, limits: limits)
        case .animatedWebP: return try WebPFrameSource(source: source, limits: limits, isCancelled: decode.isCancelled)
        case .apng: return try APNGFrameSource(source: source, limits: limits, strict: decode.strict, isCancelled: decode.isCancelled)
        case let other:
            throw FlipbookError(.unsupported, "not an animation (GIF, animated WebP or APNG): \(other)")
        }
    }
}
