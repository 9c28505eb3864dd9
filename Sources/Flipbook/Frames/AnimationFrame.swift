/// One composited frame's facts; its pixels are passed beside it.
public struct AnimationFrame: Sendable, Equatable {
    /// The frame's position in the file, from 0.
    public var index: Int
    /// When the frame appears: the sum of the displayed durations of the frames before it.
    public var presentationTimeMs: Int
    /// How long it is displayed (see `AnimationTiming`).
    public var durationMs: Int
    /// True for the last frame of a damaged file whose data ended inside it.
    public var isPartial: Bool

    /// A frame's facts, as a frame source reports them.
    public init(index: Int, presentationTimeMs: Int, durationMs: Int, isPartial: Bool = false) {
        self.index = index
        self.presentationTimeMs = presentationTimeMs
        self.durationMs = durationMs
        self.isPartial = isPartial
    }
}
