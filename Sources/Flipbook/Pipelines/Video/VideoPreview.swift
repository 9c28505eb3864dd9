/// What a preview is written as.
public enum PreviewFormat: String, Sendable, CaseIterable {
    /// Silent looping MP4 (`PreviewOptions.video.codec`: H.264 by default, or HEVC, VP9, AV1).
    case mp4
    /// WebM (VP9 or AV1).
    case webm
    /// Animated GIF: one palette for the whole preview, dithered, loops forever.
    case gif
    /// Animated WebP (lossy, libwebp through libavcodec), loops forever.
    case webp

    /// The format an output file's extension asks for: .mp4, .m4v, .mov, .webm, .gif or .webp.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "mp4", "m4v", "mov": self = .mp4
        case "webm": self = .webm
        case "gif": self = .gif
        case "webp": self = .webp
        default: return nil
        }
    }

    /// Shortest time a frame may be shown, in ms. Browsers show GIF and WebP frames of 10 ms or less for
    /// 100 ms, and GIF counts in centiseconds, so a GIF frame needs 20 ms and a WebP frame 11 ms; frames
    /// that would be shown for less are left out.
    var minimumFrameMs: Int {
        switch self {
        case .mp4, .webm: 1
        case .gif: 20
        case .webp: 11
        }
    }
}

/// How to build an animated preview. Every property documents its default.
public struct PreviewOptions: Sendable {
    /// Segments spread across the video. Default 5.
    public var segments = 5
    /// Length of each segment, in seconds. Default 1.
    public var segmentLength = 1.0
    /// Longer side of the clip, in pixels. Default 320.
    public var size = 320
    /// Cap on frames per second (nil: the source's own frames, up to 50 for GIF). Default nil.
    public var fps: Double?
    /// Default MP4.
    public var format = PreviewFormat.mp4
    /// Encoder settings for MP4 and WebM (H.264, crf 23, preset medium by default). Its `container` is
    /// not used: `format` decides.
    public var video = VideoConversionOptions()
    /// Animated WebP settings (quality 75 by default).
    public var webp = WebPPreviewOptions()
    /// Animated GIF settings (256 colours, Floyd-Steinberg by default).
    public var gif = GIFPreviewOptions()

    public init() {}
}

/// Short segments of a video stitched into one silent looping clip with continuous timestamps: the
/// kind of preview galleries play on hover, as a video, an animated WebP or a GIF.
extension PreviewOptions {
    func validate() throws {
        guard segments > 0, segmentLength > 0, size > 1 else {
            throw FlipbookError(.invalidArgument, "segments, segment length and size must be positive")
        }
        if let fps, !(fps > 0) { throw FlipbookError(.invalidArgument, "fps must be positive") }
    }
}

public enum VideoPreview {
    public struct Result: Sendable {
        public var data: [UInt8]
        public var format: PreviewFormat
        /// The clip's length: segments x segment length, to the millisecond (GIF: to the centisecond).
        public var durationMs: Int
        /// Frames in the file (identical neighbours may have been merged into one longer frame).
        public var frames: Int
        public var width: Int
        public var height: Int
    }

    /// Decodes `segments` windows of `segmentLength` seconds (each from the keyframe at or before its
    /// position), scales and turns them upright, and encodes them back to back. Audio is dropped.
    public static func make(_ input: MediaInput, options: PreviewOptions = PreviewOptions()) throws -> Result {
        if FrameSources.accepts(input.type) { return try AnimationPreview.make(input, options: options) }
        try options.validate()
        var sink = try makeSink(options)
        let reader = try VideoReader.spanning(input, maxPixelSize: options.size, for: "previews")
        let endMs = try walk(reader, options: options, minimumFrameMs: options.format.minimumFrameMs) { image, ms in
            try sink.add(image, atMs: ms)
        }
        let file = try sink.finish(endMs: endMs)
        return Result(data: file.data, format: options.format, durationMs: file.durationMs, frames: file.frames,
                      width: file.size.width, height: file.size.height)
    }

    /// The segment walk shared by every format: calls `emit` with each kept frame, rendered, and its start
    /// in ms on the clip's timeline (strictly increasing, at least `minimumFrameMs` apart and from the
    /// end); returns the clip's end in ms. Throws if no frame could be decoded.
    static func walk(_ reader: VideoReader, options: PreviewOptions, minimumFrameMs: Int,
                     emit: (Image, Int) throws -> Void) throws -> Int {
        var timeline = PreviewTimeline(durationSeconds: reader.durationSeconds, options: options, minimumFrameMs: minimumFrameMs)
        while let segment = timeline.pending {
            // Each window from the keyframe at or before its start.
            let index = timeline.current
            try reader.seek(to: segment.start)
            while timeline.current == index {
                // The server's job cancellation (a client gone, a timeout) reaches here between frames.
                if options.video.decode.isCancelled?() == true { throw FlipbookError(.cancelled, "the preview was cancelled") }
                guard let frame = try reader.nextFrame() else {
                    timeline.finishSegment()
                    break
                }
                guard let t = reader.seconds(frame), let ms = timeline.offer(t, continuing: false) else { continue }
                try emit(try reader.renderer.render(frame), ms)
            }
        }
        guard timeline.lastMs != nil else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        return timeline.endMs
    }

    static func makeSink(_ options: PreviewOptions) throws -> any PreviewSink {
        switch options.format {
        case .mp4, .webm:
            var video = options.video
            video.container = options.format == .webm ? .webm : .mp4
            return VideoPreviewSink(options: video)
        case .webp: return try WebPPreviewSink(options: options.webp)
        case .gif: return try GIFPreviewSink(options: options.gif)
        }
    }
}

/// What a sink made of the frames it was given.
struct PreviewFile {
    var data: [UInt8]
    var frames: Int
    var size: Size
    var durationMs: Int
}

/// Where the segment walk's frames go: each frame once, in order, with its start in ms, then the end.
protocol PreviewSink {
    mutating func add(_ image: Image, atMs ms: Int) throws
    mutating func finish(endMs: Int) throws -> PreviewFile
}

/// MP4 or WebM through `FrameEncoder`. A frame is encoded when the next one arrives, which gives its
/// duration; the last one lasts until the end.
struct VideoPreviewSink: PreviewSink {
    let options: VideoConversionOptions
    private var encoder: FrameEncoder?
    private var pending: (rgb: [UInt8], ms: Int)?
    private var frames = 0

    init(options: VideoConversionOptions) { self.options = options }

    mutating func add(_ image: Image, atMs ms: Int) throws {
        if encoder == nil { encoder = try FrameEncoder(width: image.width, height: image.height, options: options, loopCount: 0) }
        let rgb = try encoder!.padded(image)
        if let p = pending {
            try encoder!.encode(p.rgb, pts: p.ms, duration: ms - p.ms)
            frames += 1
        }
        pending = (rgb, ms)
    }

    mutating func finish(endMs: Int) throws -> PreviewFile {
        guard var enc = encoder, let last = pending else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        try enc.encode(last.rgb, pts: last.ms, duration: max(1, endMs - last.ms))
        let data = try enc.finish(endMs: endMs)
        return PreviewFile(data: data, frames: frames + 1, size: Size(width: enc.width, height: enc.height), durationMs: endMs)
    }
}

extension FrameEncoder {
    /// An RGB image of the encoder's size, padded to even dimensions with the background colour and
    /// followed by the slack swscale's SIMD reads need.
    func padded(_ image: Image) throws -> [UInt8] {
        guard image.width == width, image.height == height else {
            throw FlipbookError(.codec, "frame size changed from \(width)x\(height) to \(image.width)x\(image.height)")
        }
        let rgba = image.withAlpha()
        return rgba.pixels.withUnsafeBufferPointer { flatten($0) }
    }
}
