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
