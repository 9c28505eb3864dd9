import CFFmpeg

/// Animated WebP previews: frames go straight to libwebp, which keeps only what it needs to compare
/// the next frame with; memory does not grow with the frame count beyond the compressed output.
struct WebPPreviewSink: PreviewSink {
    let options: WebPPreviewOptions
    private var encoder: AnimatedWebPEncoder?

    /// Checks the options before any frame is decoded.
    init(options: WebPPreviewOptions) throws {
        try options.validate()
        self.options = options
    }

    mutating func add(_ image: Image, atMs ms: Int) throws {
        if encoder == nil { encoder = try AnimatedWebPEncoder(width: image.width, height: image.height, options: options) }
        try encoder!.add(image, atMs: ms)
    }

    mutating func finish(endMs: Int) throws -> PreviewFile {
        guard let encoder else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        let (data, frames) = try encoder.finish(endMs: endMs)
        return PreviewFile(data: data, frames: frames, size: Size(width: encoder.width, height: encoder.height), durationMs: endMs)
    }
}
