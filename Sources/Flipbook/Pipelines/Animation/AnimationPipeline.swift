/// Animated WebP and APNG (GIF keeps `GIFPipeline`): probe from headers (frames, duration, loops,
/// alpha), thumbnails from one composited frame, through the same `FrameSource` shape as GIF.
/// The input's `Limits` (canvas, frames, duration) are checked from the headers before any canvas exists.
struct AnimationPipeline: MediaPipeline {
    var name: String { "animation" }
    func accepts(_ type: MediaType) -> Bool { type == .animatedWebP || type == .apng }

    /// Header facts only: WebP through libwebp's demuxer, APNG through a chunk-header scan.
    func probe(_ input: MediaInput) throws -> MediaInfo {
        MediaInfo(animation: try open(input).info)
    }

    /// Frame `request.frameIndex` (the last one if the animation is shorter), composited and downsampled.
    /// Decodes the frames up to it, one canvas at a time.
    func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        let source = try open(input)
        var chosen: Image?
        try source.forEachFrame { frame, canvas in
            if frame.index >= request.frameIndex || frame.index == source.info.frameCount - 1 {
                chosen = Image(width: source.info.width, height: source.info.height, channels: 4, pixels: Array(canvas))
                return false
            }
            return true
        }
        // A damaged file may end before the last declared frame: take the last one decoded.
        if chosen == nil {
            var last: Image?
            let again = try open(input)
            try again.forEachFrame { _, canvas in
                last = Image(width: again.info.width, height: again.info.height, channels: 4, pixels: Array(canvas))
                return true
            }
            chosen = last
        }
        guard let image = chosen else { throw FlipbookError(.corrupt, "\(input.type) has no frames") }
        let size = Size(width: image.width, height: image.height)
        var thumbnail = Resampler.finish(image, fullSize: size, orientation: .up, request: request)
        thumbnail.warnings = source.warnings
        return thumbnail
    }

    private func open(_ input: MediaInput) throws -> any FrameSource {
        try FrameSources.open(input.source, limits: input.limits)
    }
}
