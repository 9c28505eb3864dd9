/// What a thumbnail should look like. Part of any cache key: it decides what is decoded.
public struct ThumbnailRequest: Sendable, Hashable {
    /// The longer side (`inside`) or the square's side (`cover`), in pixels. Default 256.
    public var maxPixelSize: Int = 256
    /// Default `.inside`.
    public var fit: Fit = .inside
    /// Enlarge sources smaller than the box. Default false.
    public var upscale = false
    /// Encoder quality 1-100 for JPEG and WebP. Default 80.
    public var quality = 80
    /// Default `.jpeg`.
    public var format: OutputFormat = .jpeg
    /// For animated inputs: which frame to take. Default 0.
    public var frameIndex = 0
    /// Keep the source's ICC profile (embedded in the output) instead of converting to sRGB. Default false.
    public var keepProfile = false

    /// A request with the documented defaults unless given.
    public init(maxPixelSize: Int = 256, fit: Fit = .inside, upscale: Bool = false, quality: Int = 80,
                format: OutputFormat = .jpeg, frameIndex: Int = 0, keepProfile: Bool = false) {
        self.maxPixelSize = maxPixelSize
        self.fit = fit
        self.upscale = upscale
        self.quality = quality
        self.format = format
        self.frameIndex = frameIndex
        self.keepProfile = keepProfile
    }
}
