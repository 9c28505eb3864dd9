/// Encoded output formats for stills.
public enum OutputFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp

    /// The usual file extension.
    public var fileExtension: String { rawValue == "jpeg" ? "jpg" : rawValue }

    /// The format a file name's extension asks for, if any.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        default: return nil
        }
    }
}

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

/// What `probe` reports about an input. Fields are nil where unknown or meaningless.
public struct MediaInfo: Sendable, Equatable {
    public var type: MediaType
    /// Displayed size, after orientation.
    public var width: Int?
    public var height: Int?
    /// EXIF orientation 1-8 (stills), or 1 when absent.
    public var orientation: Int?
    public var frames: Int?
    public var durationMs: Int?
    /// 0 means forever; nil means no loop information (plays once).
    public var loopCount: Int?
    public var hasAlpha: Bool?
    /// libav's name for the codec: "mjpeg", "png", "webp", "gif", "h264", ...
    public var codec: String?

    public init(type: MediaType) { self.type = type }
}

/// One pipeline of the router: it says which media types it takes and does the work for them. New kinds of
/// media plug in by registering a pipeline; the router itself does not change.
public protocol MediaPipeline: Sendable {
    /// A short name for logs and errors.
    var name: String { get }
    /// Whether this pipeline handles `type`.
    func accepts(_ type: MediaType) -> Bool
    /// Reads only headers (no pixel decoding) and reports what the input is.
    func probe(_ input: MediaInput) throws -> MediaInfo
    /// Decodes a thumbnail: upright, exactly the planned size, RGB or RGBA.
    func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image
}

/// Sends each input to the first registered pipeline that accepts its sniffed type.
public struct MediaRouter: Sendable {
    public private(set) var pipelines: [any MediaPipeline]

    public init(pipelines: [any MediaPipeline]) { self.pipelines = pipelines }

    /// Animated WebP and APNG (ahead of stills, which would otherwise take their first frame), stills, GIF
    /// and video, in that order.
    public static let standard = MediaRouter(pipelines: [AnimationPipeline(), StillPipeline(), GIFPipeline(), VideoPipeline()])

    /// Adds `pipeline` ahead of the existing ones, so it can take over a type.
    public mutating func register(_ pipeline: any MediaPipeline) { pipelines.insert(pipeline, at: 0) }

    /// The pipeline for `type`, or a typed error naming what was found.
    public func pipeline(for type: MediaType) throws -> any MediaPipeline {
        if type == .unknown { throw FlipbookError(.unknownFormat, "not a recognised image or video format") }
        guard let pipeline = pipelines.first(where: { $0.accepts(type) }) else {
            throw FlipbookError(.unsupported, "no pipeline handles \(type) input")
        }
        return pipeline
    }
}
