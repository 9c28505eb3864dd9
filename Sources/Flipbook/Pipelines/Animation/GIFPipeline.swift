/// GIFs: probe by scanning blocks (no pixel decoding); thumbnails from one composited frame. The input's
/// `Limits` apply; `options` gives the rest of the decoder's behaviour (strictness, cancellation).
struct GIFPipeline: MediaPipeline {
    var options: GIFDecodeOptions

    init(options: GIFDecodeOptions = GIFDecodeOptions()) { self.options = options }
    var name: String { "gif" }
    func accepts(_ type: MediaType) -> Bool { type == .gif }

    func probe(_ input: MediaInput) throws -> MediaInfo {
        MediaInfo(animation: AnimationInfo(gif: try GIFDecoder.info(source: input.source, options: effectiveOptions(input))))
    }

    /// Frame `request.frameIndex` (the last one if the GIF is shorter), composited and downsampled.
    func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        let decoder = try GIFDecoder(source: input.source, options: effectiveOptions(input))
        var chosen: GIFFrame?
        while let frame = try decoder.nextFrame() {
            chosen = frame
            if frame.index >= request.frameIndex { break }
        }
        guard let frame = chosen else { throw FlipbookError(.corrupt, "GIF has no frames") }
        let size = Size(width: frame.image.width, height: frame.image.height)
        var image = Resampler.finish(frame.image, fullSize: size, orientation: .up, request: request)
        // A GIF cut short still gives the frames it has; say so, as the still path does for a JPEG's.
        image.warnings = decoder.warnings
        return image
    }

    /// The pipeline's options with the input's limits.
    private func effectiveOptions(_ input: MediaInput) -> GIFDecodeOptions {
        var o = options
        o.limits = input.limits
        return o
    }
}
