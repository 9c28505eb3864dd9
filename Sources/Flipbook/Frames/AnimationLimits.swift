/// Limits of the animation decoders, all checked from headers before allocating. Every property
/// documents its default.
public struct AnimationLimits: Sendable, Equatable {
    /// Largest canvas, in pixels. Default 50 MP (200 MB as RGBA), as GIFs.
    public var maxCanvasPixels = 50_000_000
    /// Most frames. Default 10,000, as GIFs.
    public var maxFrames = 10_000
    /// Longest total displayed duration, in ms. Default 24 hours: GIFs that hold a frame for minutes exist
    /// (a delay can be 655 s), and the work is bounded by frames and pixels; this catches nonsense timing.
    public var maxDurationMs = 86_400_000

    /// Limits with the documented defaults unless given.
    public init(maxCanvasPixels: Int = 50_000_000, maxFrames: Int = 10_000, maxDurationMs: Int = 86_400_000) {
        self.maxCanvasPixels = maxCanvasPixels
        self.maxFrames = maxFrames
        self.maxDurationMs = maxDurationMs
    }

    /// Throws `.limitExceeded` naming the format if the header's numbers are over the limits.
    func check(_ info: AnimationInfo, what: String) throws {
        let (pixels, overflow) = info.width.multipliedReportingOverflow(by: info.height)
        if overflow || pixels > maxCanvasPixels {
            throw FlipbookError(.limitExceeded, "\(what) canvas is \(info.width)x\(info.height), over the \(maxCanvasPixels / 1_000_000) MP limit")
        }
        if info.frameCount > maxFrames {
            throw FlipbookError(.limitExceeded, "\(what) has \(info.frameCount) frames, over the \(maxFrames)-frame limit")
        }
        if info.durationMs > maxDurationMs {
            throw FlipbookError(.limitExceeded, "\(what) lasts \(info.durationMs) ms, over the \(maxDurationMs) ms limit")
        }
    }
}
