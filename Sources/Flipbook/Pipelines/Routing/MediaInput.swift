/// One input: its bytes (memory or file), its sniffed type and the limits that apply. The entry point of
/// the library.
///
/// ```swift
/// let input = try MediaInput(path: "photo.jpg")
/// let jpeg = try input.thumbnail(maxPixelSize: 256, fit: .cover, quality: 80, format: .jpeg)
/// ```
public struct MediaInput: Sendable {
    /// The bytes; read by offset, never loaded whole unless a decoder needs contiguous bytes.
    public let source: any ByteSource
    /// Sniffed from the first bytes (`MediaType.sniff`); `.unknown` if nothing matched.
    public let type: MediaType
    /// Checked from headers before any large allocation.
    public let limits: Limits
    /// Picks the pipeline for `type`.
    public let router: MediaRouter
    /// The file name, for messages.
    public let name: String

    /// Wraps a byte source; sniffs its type (a few header reads).
    public init(source: any ByteSource, name: String = "input", limits: Limits = Limits(), router: MediaRouter = .standard) {
        self.source = source
        self.type = MediaType.sniff(source)
        self.limits = limits
        self.router = router
        self.name = name
    }

    /// Opens a file without reading it whole. Throws `.io` if it cannot be opened, `.limitExceeded` if it is
    /// larger than `limits.maxInputBytes` (`limits.maxVideoInputBytes` for a video).
    public init(path: String, limits: Limits = Limits(), router: MediaRouter = .standard) throws {
        let file = try FileByteSource(path: path)
        try limits.checkBytes(file.count, type: file.count > limits.maxInputBytes ? MediaType.sniff(file) : .unknown)
        self.init(source: file, name: path, limits: limits, router: router)
    }

    /// Wraps bytes already in memory (copied once into shared storage).
    public init(bytes: [UInt8], name: String = "input", limits: Limits = Limits(), router: MediaRouter = .standard) throws {
        try limits.checkBytes(bytes.count)
        self.init(source: MemoryByteSource(bytes), name: name, limits: limits, router: router)
    }

    /// Header-only description of the input.
    public func probe() throws -> MediaInfo {
        try router.pipeline(for: type).probe(self)
    }

    /// The decoded thumbnail: upright, exactly the planned size.
    public func thumbnailImage(_ request: ThumbnailRequest) throws -> Image {
        try Cancellation.check("the thumbnail")  // a batch stops between files; GIF and video also per frame
        return try router.pipeline(for: type).thumbnail(self, request)
    }

    /// An encoded thumbnail. Decodes at reduced size where the format allows (JPEG: 1/8 to 1/1), so memory
    /// follows the thumbnail, not the original.
    public func thumbnail(maxPixelSize: Int = 256, fit: Fit = .inside, quality: Int = 80, format: OutputFormat = .jpeg,
                          upscale: Bool = false) throws -> EncodedImage {
        let request = ThumbnailRequest(maxPixelSize: maxPixelSize, fit: fit, upscale: upscale, quality: quality, format: format)
        return try thumbnail(request)
    }

    /// An encoded thumbnail for `request`.
    public func thumbnail(_ request: ThumbnailRequest) throws -> EncodedImage {
        guard request.maxPixelSize > 0 else { throw FlipbookError(.invalidArgument, "size must be positive") }
        let image = try thumbnailImage(request)
        return try EncodedImage(image: image, format: request.format, quality: request.quality)
    }
}
