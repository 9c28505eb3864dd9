/// What an animation's headers say, read before any pixel is decoded (and before the canvas is allocated).
public struct AnimationInfo: Sendable, Equatable {
    /// `.gif`, `.animatedWebP` or `.apng`.
    public var type: MediaType
    /// The canvas every frame is composited onto.
    public var width: Int
    public var height: Int
    /// Frames in the file (for a streamed GIF: the frames decoded so far).
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

extension AnimationInfo {
    /// A GIF block scan's facts (`GIFDecoder.info`), each delay as a browser displays it.
    init(gif scan: GIFInfo) {
        self.init(type: .gif, width: scan.width, height: scan.height, frameCount: scan.frameCount,
                  durationsMs: scan.delays.map { GIFTiming.displayedMilliseconds(centiseconds: $0) },
                  durationMs: scan.durationMs, loopCount: scan.loopCount, hasAlpha: scan.hasTransparency, codec: "gif")
    }
}

extension MediaInfo {
    /// An animation's header facts as `probe` reports them (animations carry no orientation).
    init(animation: AnimationInfo) {
        self.init(type: animation.type)
        width = animation.width
        height = animation.height
        orientation = 1
        frames = animation.frameCount
        durationMs = animation.durationMs
        loopCount = animation.loopCount
        hasAlpha = animation.hasAlpha
        codec = animation.codec
    }
}
