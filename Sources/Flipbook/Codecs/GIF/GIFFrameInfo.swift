/// A frame's facts without its pixels (see `GIFDecoder.forEachFrame`).
public struct GIFFrameInfo: Sendable {
    public var index: Int
    public var presentationTimeMs: Int
    public var durationMs: Int
    public var delayCentiseconds: Int
    public var disposal: GIFDisposal
    public var isPartial: Bool
}
