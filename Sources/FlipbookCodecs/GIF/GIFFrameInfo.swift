/// A frame's facts without its pixels (see `GIFDecoder.forEachFrame`).
package struct GIFFrameInfo: Sendable {
    package var index: Int
    package var presentationTimeMs: Int
    package var durationMs: Int
    package var delayCentiseconds: Int
    package var disposal: GIFDisposal
    package var isPartial: Bool
}
