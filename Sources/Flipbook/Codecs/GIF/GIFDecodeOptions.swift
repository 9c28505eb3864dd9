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

    /// Options with the documented defaults unless given.
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
