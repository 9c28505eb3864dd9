/// Previews of animations (GIF, animated WebP, APNG): the same segments as a video's preview, spread across
/// the animation's timeline, through the same sinks (MP4, WebM, GIF, animated WebP). An animation's frame
/// is held until the next one, so each segment opens with the frame on screen at its start, then takes
/// every frame that starts inside it, at its exact offset. One sequential decode, one canvas at a time.
enum AnimationPreview {
    static func make(_ input: MediaInput, options: PreviewOptions) throws -> VideoPreview.Result {
        try options.validate()
        let source = try FrameSources.open(input.source, limits: input.limits)
        let info = source.info
        guard info.durationMs > 0 else { throw FlipbookError(.corrupt, "\(input.type) has no duration") }
        let timeline = PreviewTimeline(durationSeconds: Double(info.durationMs) / 1000, options: options,
                                       minimumFrameMs: options.format.minimumFrameMs)
        let windows = timeline.segments.map { (start: Int(($0.start * 1000).rounded()), length: Int(($0.length * 1000).rounded())) }
        let endMs = timeline.endMs
        let minimumGap = options.fps.map { Int((1000 / $0).rounded()) } ?? 0
        let minimumFrameMs = options.format.minimumFrameMs
        var sink = try VideoPreview.makeSink(options)
        var lastMs: Int?
        var emitted = 0
        try source.forEachFrame { frame, canvas in
            let start = frame.presentationTimeMs, end = start + frame.durationMs
            for (k, window) in windows.enumerated() where start < window.start + window.length && end > window.start {
                // Where this frame appears on the clip: segment k's place plus its offset inside the window.
                let segmentOrigin = Int((Double(k) * Double(window.length)).rounded())
                let ms = segmentOrigin + max(0, start - window.start)
                if let last = lastMs {
                    guard ms > last, ms - last >= max(minimumFrameMs, minimumGap), endMs - ms >= minimumFrameMs else { continue }
                }
                try sink.add(FrameScaling.image(canvas, info: info, maxPixelSize: options.size).flattened(), atMs: ms)
                lastMs = ms
                emitted += 1
            }
            return start < (windows.last.map { $0.start + $0.length } ?? 0)
        }
        guard emitted > 0 else { throw FlipbookError(.corrupt, "no frame of the \(input.type) could be decoded") }
        let file = try sink.finish(endMs: endMs)
        return VideoPreview.Result(data: file.data, format: options.format, durationMs: file.durationMs, frames: file.frames,
                                   width: file.size.width, height: file.size.height)
    }
}
