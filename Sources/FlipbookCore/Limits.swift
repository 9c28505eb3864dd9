/// Resource limits, one value for every pipeline (stills, animations, video, conversion), each checked
/// from headers before the allocation it guards. Violations throw `FlipbookError.Code.limitExceeded`
/// (the server answers 422). Every property documents its default; `MediaInput` carries the value, so a
/// pipeline never holds limits of its own.
public struct Limits: Sendable, Equatable {
    /// Largest decoded image, in pixels (width x height). Default 100 megapixels (400 MB as RGBA). Also
    /// caps `maxCanvasPixels` and `maxVideoFramePixels`, so one number (`thumb --max-megapixels`) bounds
    /// every kind of input.
    public var maxPixels: Int = 100_000_000
    /// Largest input accepted, in bytes, of the kinds a decoder may hold whole (stills and animations). Default
    /// 512 MiB. Videos are read by ranges through libavformat and bounded by `maxVideoInputBytes` instead.
    public var maxInputBytes: Int = 512 << 20
    /// Largest video input accepted, in bytes. Default 1 TiB: a poster of a 2 GB recording reads a few
    /// megabytes of it, and its memory follows the frame, not the file, as it does for ffmpeg.
    public var maxVideoInputBytes: Int = 1 << 40
    /// Largest source decoded with scaling (WebP) or streamed row by row (PNG), in pixels. Memory then
    /// follows the thumbnail; this bounds only the decoding time. Default 1,000 megapixels.
    public var maxScaledPixels: Int = 1_000_000_000
    /// Largest coded video frame, in pixels, checked from the stream's header before the decoder opens
    /// (and passed to it as `max_pixels`). Default 8K x 8K (67 MP): an 8K frame and its references stay
    /// within the 300 MB budget.
    public var maxVideoFramePixels: Int = 8192 * 8192
    /// Largest animation canvas (GIF logical screen, WebP/APNG canvas), in pixels. Default 50 MP (200 MB
    /// as RGBA: the canvas plus one saved copy for GIF disposal 3).
    public var maxCanvasPixels: Int = 50_000_000
    /// Most frames in an animation. Default 10,000.
    public var maxFrames: Int = 10_000
    /// Longest total displayed duration of an animation, in ms. Default 24 hours: GIFs that hold a frame
    /// for minutes exist (a delay can be 655 s), and the work is bounded by frames and pixels; this
    /// catches nonsense timing.
    public var maxDurationMs: Int = 86_400_000
    /// Most pixels LZW-decoded over all of a GIF's frames (frames larger than the canvas count in full):
    /// bounds the decoding time of a file the scan could not (a frame rectangle is not the canvas).
    /// Default 2,000 megapixels.
    public var maxTotalPixels: Int = 2_000_000_000

    /// Limits with the documented defaults unless given.
    public init(maxPixels: Int = 100_000_000, maxInputBytes: Int = 512 << 20, maxCanvasPixels: Int = 50_000_000,
                maxFrames: Int = 10_000, maxDurationMs: Int = 86_400_000, maxTotalPixels: Int = 2_000_000_000,
                maxVideoFramePixels: Int = 8192 * 8192, maxScaledPixels: Int = 1_000_000_000) {
        self.maxPixels = maxPixels
        self.maxInputBytes = maxInputBytes
        self.maxCanvasPixels = maxCanvasPixels
        self.maxFrames = maxFrames
        self.maxDurationMs = maxDurationMs
        self.maxTotalPixels = maxTotalPixels
        self.maxVideoFramePixels = maxVideoFramePixels
        self.maxScaledPixels = maxScaledPixels
    }

    /// The canvas limit actually applied: `maxCanvasPixels`, no looser than `maxPixels`.
    public var canvasPixelLimit: Int { min(maxCanvasPixels, maxPixels) }
    /// The coded video frame limit actually applied: `maxVideoFramePixels`, no looser than `maxPixels`.
    public var videoFramePixelLimit: Int { min(maxVideoFramePixels, maxPixels) }

    /// Megapixels for a message: whole from 10 MP, else to a tenth, rounded down ("1.9 MP" over a 1 MP limit
    /// read "1 MP, over the 1 MP limit"; a limit under 1 MP read "0 MP").
    static func megapixels(_ pixels: Int) -> String {
        pixels >= 10_000_000 ? "\(pixels / 1_000_000)" : "\(pixels / 1_000_000).\(pixels / 100_000 % 10)"
    }

    /// Throws if a `width` x `height` image may not be decoded (over `limit`, `maxPixels` by default).
    package func checkPixels(width: Int, height: Int, limit: Int? = nil, what: String = "image") throws {
        let maxPixels = limit ?? self.maxPixels
        guard width > 0, height > 0 else {
            throw FlipbookError(.corrupt, "\(what) declares an empty size \(width)x\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixels {
            throw FlipbookError(.limitExceeded,
                                "\(what) is \(width)x\(height) (\(Self.megapixels(pixels)) MP), over the \(Self.megapixels(maxPixels)) MP limit")
        }
    }

    /// Throws if an input of `count` bytes is over `maxInputBytes`.
    package func checkBytes(_ count: Int) throws {
        if count > maxInputBytes {
            throw FlipbookError(.limitExceeded, "input is \(count) bytes, over the \(maxInputBytes)-byte limit")
        }
    }

    /// Throws if an input of `count` bytes sniffed as `type` is over its limit: `maxVideoInputBytes` for a
    /// video, `maxInputBytes` for anything else.
    package func checkBytes(_ count: Int, type: MediaType) throws {
        guard type.isVideo else { return try checkBytes(count) }
        if count > maxVideoInputBytes {
            throw FlipbookError(.limitExceeded, "video input is \(count) bytes, over the \(maxVideoInputBytes)-byte limit")
        }
    }

    /// The most bytes any input may have, whatever its kind: the bound for opening a source before its type
    /// is known.
    public var maxAnyInputBytes: Int { max(maxInputBytes, maxVideoInputBytes) }

    /// Throws `.limitExceeded` naming the format (`what`) if an animation's header numbers are over the
    /// canvas, frame or duration limits. Called before the canvas is allocated.
    package func checkAnimation(width: Int, height: Int, frames: Int, durationMs: Int, what: String) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > canvasPixelLimit {
            throw FlipbookError(.limitExceeded, "\(what) canvas is \(width)x\(height), over the \(Self.megapixels(canvasPixelLimit)) MP limit")
        }
        if frames > maxFrames {
            throw FlipbookError(.limitExceeded, "\(what) has \(frames) frames, over the \(maxFrames)-frame limit")
        }
        if durationMs > maxDurationMs {
            throw FlipbookError(.limitExceeded, "\(what) lasts \(durationMs) ms, over the \(maxDurationMs) ms limit")
        }
    }
}
