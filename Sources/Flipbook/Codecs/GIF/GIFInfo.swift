/// What a scan of a GIF reports without decompressing any pixels.
public struct GIFInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var frameCount: Int
    /// Raw delays, in centiseconds, per frame.
    public var delays: [Int]
    /// Sum of displayed durations.
    public var durationMs: Int
    /// NETSCAPE2.0/ANIMEXTS1.0 loop count: 0 forever, nil if absent (plays once).
    public var loopCount: Int?
    /// Some frame declares a transparent colour, or the first frame does not cover the canvas.
    public var hasTransparency: Bool
    /// The scan stopped early at damaged or missing data.
    public var truncated: Bool
}
