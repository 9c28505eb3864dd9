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
    /// Told of every decode of the still's pixels (not of header reads), on the decoding thread; nil: nothing
    /// is reported. Passed in by the caller (an ingester, a test), never process-wide. The still pipeline
    /// (JPEG, PNG, WebP, AVIF/HEIC, BMP, TIFF) reports; GIF, animation and video pipelines do not.
    public var onDecode: (@Sendable (DecodeEvent) -> Void)?

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

    /// One image for each of `requests`, in order, from as few decodes as the format allows: a still (JPEG,
    /// PNG, WebP, AVIF/HEIC, BMP, TIFF) is decoded once, at the reduced size the largest of them needs, and
    /// each image is shrunk from that decode (so memory follows the largest thumbnail, not the original, and
    /// not the sum of them). Each equals `thumbnailImage` of its request alone up to the resampling: the one
    /// at the largest scale is identical, the smaller ones are box-shrunk from it before their Lanczos, as
    /// libvips shrinks. A GIF or an animation (its frame `frameIndex`) is decoded once too, whole, at the
    /// largest scale, by its pipeline; a video, requests for different frames, or requests keeping the source's
    /// profile, once per request.
    public func thumbnailImages(_ requests: [ThumbnailRequest]) throws -> [Image] {
        try Cancellation.check("the thumbnail")
        let pipeline = try router.pipeline(for: type)
        if let still = pipeline as? StillPipeline { return try still.thumbnails(self, requests) }
        guard requests.count > 1, !type.isVideo, let first = requests.first, !first.keepProfile,
              requests.allSatisfy({ $0.frameIndex == first.frameIndex && $0.keepProfile == first.keepProfile }),
              let info = try? pipeline.probe(self), let w = info.width, let h = info.height, w > 0, h > 0 else {
            return try requests.map { try pipeline.thumbnail(self, $0) }
        }
        // The whole frame at the largest scale any request needs, upright and in sRGB as the pipeline makes it;
        // each image is cut from it as from a still's decode.
        let display = Size(width: w, height: h)
        let plan = ScaledStill.decodePlan(display: display, orientation: .up, requests: requests)
        var whole = first
        whole.maxPixelSize = max(plan.output.width, plan.output.height)
        whole.fit = .inside
        whole.upscale = plan.scale > 1
        let image = try pipeline.thumbnail(self, whole)
        let scale = Double(image.width) / Double(w)
        let still = ScaledStill(image: image, fullSize: display, orientation: .up, colour: .done, plannedScale: min(scale, plan.scale),
                                warnings: image.warnings)
        return requests.map { still.thumbnail(plan: still.plan($0), keepProfile: false) }
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

extension MediaInput {
    /// Tells `onDecode` that `decoder` produced `image` from this input.
    func report(_ decoder: String, _ image: Image) {
        onDecode?(DecodeEvent(type: type, decoder: decoder, width: image.width, height: image.height))
    }
}
