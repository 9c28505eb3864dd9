/// One composited frame.
package struct GIFFrame: Sendable {
    package var index: Int
    /// When the frame appears: the sum of the displayed durations of the frames before it.
    package var presentationTimeMs: Int
    /// How long it is displayed (see `GIFTiming`).
    package var durationMs: Int
    /// The delay as stored, in centiseconds.
    package var delayCentiseconds: Int
    package var disposal: GIFDisposal
    /// The whole canvas after this frame, RGBA (scaled if `maxPixelSize` was set).
    package var image: Image
    /// True for the last frame of a truncated file: rows that were never decoded are left transparent.
    package var isPartial: Bool

    package init(_ info: GIFFrameInfo, image: Image) {
        index = info.index
        presentationTimeMs = info.presentationTimeMs
        durationMs = info.durationMs
        delayCentiseconds = info.delayCentiseconds
        disposal = info.disposal
        isPartial = info.isPartial
        self.image = image
    }

    /// The frame's facts without its pixels.
    package var info: GIFFrameInfo {
        GIFFrameInfo(index: index, presentationTimeMs: presentationTimeMs, durationMs: durationMs,
                     delayCentiseconds: delayCentiseconds, disposal: disposal, isPartial: isPartial)
    }
}
