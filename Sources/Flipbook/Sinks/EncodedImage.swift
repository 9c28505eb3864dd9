/// Encoded image bytes and what they hold.
public struct EncodedImage: Sendable {
    /// The encoded file's bytes.
    public let data: [UInt8]
    /// The picture's width in pixels.
    public let width: Int
    /// The picture's height in pixels.
    public let height: Int
    /// JPEG, PNG or WebP.
    public let format: OutputFormat
    /// What the decoder recovered from (`Image.warnings`): the picture may be incomplete.
    public let warnings: [String]

    /// Encodes `image`: JPEG through TurboJPEG (alpha flattened onto white), PNG and WebP through libavcodec.
    public init(image: Image, format: OutputFormat, quality: Int) throws {
        var encoded: [UInt8]
        switch format {
        case .jpeg: encoded = try TurboJPEG.encode(image, quality: quality)
        case .png, .webp:
            // An alpha channel with nothing transparent in it only costs bytes (GIF frames often are such).
            let source = image.hasAlpha && !image.hasTransparentPixels ? image.flattened() : image
            encoded = try LibAVStillCodec.encode(source, format: format, quality: quality)
        }
        if let profile = image.iccProfile { encoded = ProfileEmbedding.embed(profile, in: encoded, format: format) }
        data = encoded
        width = image.width
        height = image.height
        self.format = format
        warnings = image.warnings
    }
}
