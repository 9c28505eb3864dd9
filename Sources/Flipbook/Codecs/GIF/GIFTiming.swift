/// GIF timing rules, in one place.
public enum GIFTiming {
    /// How long a frame is shown, in milliseconds, for a raw delay in centiseconds: browsers (Chrome,
    /// Firefox, Safari) play a delay of 0 or 1 cs as 100 ms, because such files were made for engines
    /// that ignored tiny delays; everything else is delay x 10 ms.
    public static func displayedMilliseconds(centiseconds: Int) -> Int {
        centiseconds <= 1 ? 100 : centiseconds * 10
    }
}

/// How a frame leaves the canvas for the next one (the GIF89a disposal method).
public enum GIFDisposal: Int, Sendable {
    /// 0: unspecified; treated like `keep`.
    case unspecified = 0
    /// 1: leave the frame in place.
    case keep = 1
    /// 2: clear the frame's rectangle to transparent (browsers do not paint the background colour).
    case background = 2
    /// 3: restore the canvas as it was before the frame.
    case previous = 3

    init(raw: Int) { self = GIFDisposal(rawValue: raw) ?? .unspecified }  // 4-7 are reserved: keep
}

/// Limits and behaviour of the GIF decoder.
public struct GIFDecodeOptions: Sendable {
    /// Largest logical screen (canvas), in pixels. Default 50 MP.
    public var maxCanvasPixels = 50_000_000
    /// Most frames decoded. Default 10,000.
    public var maxFrames = 10_000
    /// Most pixels LZW-decoded over all frames (frames larger than the canvas count in full). Default 2 G.
    public var maxTotalPixels = 2_000_000_000
    /// Treat a truncated or damaged file as an error instead of ending with the frames decoded so far.
    public var strict = false
    /// Downscale every frame while compositing so the longer side is at most this (nil: canvas size).
    public var maxPixelSize: Int?
    /// Polled between frames; returning true stops decoding with `.cancelled`.
    public var isCancelled: (@Sendable () -> Bool)?

    public init(maxCanvasPixels: Int = 50_000_000, maxFrames: Int = 10_000, maxTotalPixels: Int = 2_000_000_000,
                strict: Bool = false, maxPixelSize: Int? = nil, isCancelled: (@Sendable () -> Bool)? = nil) {
        self.maxCanvasPixels = maxCanvasPixels
        self.maxFrames = maxFrames
        self.maxTotalPixels = maxTotalPixels
        self.strict = strict
        self.maxPixelSize = maxPixelSize
        self.isCancelled = isCancelled
    }
}

/// One composited frame.
public struct GIFFrame: Sendable {
    public var index: Int
    /// When the frame appears: the sum of the displayed durations of the frames before it.
    public var presentationTimeMs: Int
    /// How long it is displayed (see `GIFTiming`).
    public var durationMs: Int
    /// The delay as stored, in centiseconds.
    public var delayCentiseconds: Int
    public var disposal: GIFDisposal
    /// The whole canvas after this frame, RGBA (scaled if `maxPixelSize` was set).
    public var image: Image
    /// True for the last frame of a truncated file: rows that were never decoded are left transparent.
    public var isPartial: Bool

    init(_ info: GIFFrameInfo, image: Image) {
        index = info.index
        presentationTimeMs = info.presentationTimeMs
        durationMs = info.durationMs
        delayCentiseconds = info.delayCentiseconds
        disposal = info.disposal
        isPartial = info.isPartial
        self.image = image
    }

    /// The frame's facts without its pixels.
    public var info: GIFFrameInfo {
        GIFFrameInfo(index: index, presentationTimeMs: presentationTimeMs, durationMs: durationMs,
                     delayCentiseconds: delayCentiseconds, disposal: disposal, isPartial: isPartial)
    }
}

/// A frame's facts without its pixels (see `GIFDecoder.forEachFrame`).
public struct GIFFrameInfo: Sendable {
    public var index: Int
    public var presentationTimeMs: Int
    public var durationMs: Int
    public var delayCentiseconds: Int
    public var disposal: GIFDisposal
    public var isPartial: Bool
}

/// What a scan of a GIF reports without decompressing any pixels.
public struct GIFInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var frameCount: Int
    /// Raw delays, in centiseconds, per frame.
    public var delays: [Int]
    /// Sum of displayed durations.
    public var durationMs: Int
    /// NETSCAPE2.0/ANIMEXTS1.0 loop count: 0 forever, nil if absent (plays once).
    public var loopCount: Int?
    /// Some frame declares a transparent colour, or the first frame does not cover the canvas.
    public var hasTransparency: Bool
    /// The scan stopped early at damaged or missing data.
    public var truncated: Bool
}
