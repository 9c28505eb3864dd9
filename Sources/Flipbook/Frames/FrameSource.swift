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
