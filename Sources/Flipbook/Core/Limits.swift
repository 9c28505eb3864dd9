/// Resource limits checked from headers before any large allocation. Violations throw
/// `FlipbookError.Code.limitExceeded`.
public struct Limits: Sendable, Equatable {
    /// Largest decoded image, in pixels (width x height). Default 100 megapixels (400 MB as RGBA).
    public var maxPixels: Int = 100_000_000
    /// Largest input accepted, in bytes. Default 512 MiB.
    public var maxInputBytes: Int = 512 << 20
    /// Largest source decoded with scaling (WebP) or streamed row by row (PNG), in pixels. Memory then
    /// follows the thumbnail; this bounds only the decoding time. Default 1,000 megapixels.
    public var maxScaledPixels: Int = 1_000_000_000
    /// Largest coded video frame, in pixels, checked from the stream's header before the decoder opens
    /// (and passed to it as `max_pixels`). Default 8K x 8K (67 MP): an 8K frame and its references stay
    /// within the 300 MB budget.
    public var maxVideoFramePixels: Int = 8192 * 8192

    /// Limits with the documented defaults unless given.
    public init(maxPixels: Int = 100_000_000, maxInputBytes: Int = 512 << 20) {
        self.maxPixels = maxPixels
        self.maxInputBytes = maxInputBytes
    }

    /// Throws if a `width` x `height` image may not be decoded.
    func checkPixels(width: Int, height: Int, limit: Int? = nil, what: String = "image") throws {
        let maxPixels = limit ?? self.maxPixels
        guard width > 0, height > 0 else {
            throw FlipbookError(.corrupt, "\(what) declares an empty size \(width)x\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixels {
            throw FlipbookError(.limitExceeded,
                                "\(what) is \(width)x\(height) (\(width * height / 1_000_000) MP), over the \(maxPixels / 1_000_000) MP limit")
        }
    }

    func checkBytes(_ count: Int) throws {
        if count > maxInputBytes {
            throw FlipbookError(.limitExceeded, "input is \(count) bytes, over the \(maxInputBytes)-byte limit")
        }
    }
}
