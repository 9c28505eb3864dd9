/// What a scan of a GIF reports without decompressing any pixels.
package struct GIFInfo: Sendable, Equatable {
    package var width: Int
    package var height: Int
    package var frameCount: Int
    /// Raw delays, in centiseconds, per frame.
    package var delays: [Int]
    /// Sum of displayed durations.
    package var durationMs: Int
    /// NETSCAPE2.0/ANIMEXTS1.0 loop count: 0 forever, nil if absent (plays once).
    package var loopCount: Int?
    /// Some frame declares a transparent colour, or the first frame does not cover the canvas.
    package var hasTransparency: Bool
    /// The scan stopped early at damaged or missing data.
    package var truncated: Bool
}
