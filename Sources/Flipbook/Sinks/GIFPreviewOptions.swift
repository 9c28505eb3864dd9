/// Animated GIF settings. Every property documents its default.
public struct GIFPreviewOptions: Sendable {
    /// Palette entries, 4-256; one of them is kept for transparency (unchanged pixels), the rest are
    /// colours. Default 256.
    public var colors = 256
    /// Default Floyd-Steinberg.
    public var dither = GIFDither.floydSteinberg
    /// Largest per-channel change (0-255) of a pixel's source colour that leaves the pixel as the GIF
    /// already shows it: 0 redraws any change. Default 3, which absorbs a lossy source's flicker on still
    /// backgrounds. Measured on a 3 s phone clip at 320x300: 4.9 MB at 0, 2.6 MB at 3, 1.3 MB at 6, for a
    /// mean error after a 3x3 blur of 0.98, 1.18 and 1.68 levels (ffmpeg's palettegen/paletteuse: 4.7 MB, 1.00).
    public var stillTolerance = 3
    /// Cap on the memory holding frames until the palette is known, in bytes of RGB. Default 128 MiB:
    /// about 770 frames of 320x180, five times a default preview at 30 fps.
    public var maxBufferedBytes = 128 << 20

    /// Every option at its documented default.
    public init() {}
}
