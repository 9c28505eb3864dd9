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

    /// Encodes `image`: JPEG through TurboJPEG (alpha flattened onto white), WebP through libwebp, PNG
    /// through libavcodec.
    public init(image: Image, format: OutputFormat, quality: Int) throws {
        var encoded: [UInt8]
        // An alpha channel with nothing transparent in it only costs bytes (GIF frames often are such).
        func opaqueFlattened() -> Image { image.hasAlpha && !image.hasTransparentPixels ? image.flattened() : image }
        switch format {
        case .jpeg: encoded = try TurboJPEG.encode(image, quality: quality)
        case .webp: encoded = try WebPStillEncoder.encode(opaqueFlattened(), quality: quality)
        case .png: encoded = try LibAVStillCodec.encode(opaqueFlattened(), format: format, quality: quality)
        }
        if let profile = image.iccProfile { encoded = ProfileEmbedding.embed(profile, in: encoded, format: format) }
        data = encoded
        width = image.width
        height = image.height
        self.format = format
        warnings = image.warnings
    }
}
