/// Behaviour of the GIF decoder, and the `Limits` it checks (canvas from the logical screen, frames and
/// total decoded pixels as it goes).
public struct GIFDecodeOptions: Sendable {
    /// Canvas, frame and total-pixel limits. Default `Limits()` (50 MP canvas, 10,000 frames, 2 G pixels).
    public var limits = Limits()
    /// Treat a truncated or damaged file as an error instead of ending with the frames decoded so far.
    public var strict = false
    /// Downscale every frame while compositing so the longer side is at most this (nil: canvas size).
    public var maxPixelSize: Int?
    /// Polled between frames; returning true stops decoding with `.cancelled`.
    public var isCancelled: (@Sendable () -> Bool)?

    /// Options with the documented defaults unless given; the three numbers set the same fields of `limits`.
    public init(maxCanvasPixels: Int = 50_000_000, maxFrames: Int = 10_000, maxTotalPixels: Int = 2_000_000_000,
                strict: Bool = false, maxPixelSize: Int? = nil, isCancelled: (@Sendable () -> Bool)? = nil) {
        limits = Limits(maxCanvasPixels: maxCanvasPixels, maxFrames: maxFrames, maxTotalPixels: maxTotalPixels)
        self.strict = strict
        self.maxPixelSize = maxPixelSize
        self.isCancelled = isCancelled
    }

    /// `limits.maxCanvasPixels`.
    public var maxCanvasPixels: Int {
        get { limits.maxCanvasPixels }
        set { limits.maxCanvasPixels = newValue }
    }
    /// `limits.maxFrames`.
    public var maxFrames: Int {
        get { limits.maxFrames }
        set { limits.maxFrames = newValue }
    }
    /// `limits.maxTotalPixels`.
    public var maxTotalPixels: Int {
        get { limits.maxTotalPixels }
        set { limits.maxTotalPixels = newValue }
    }
}
