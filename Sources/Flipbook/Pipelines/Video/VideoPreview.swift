/// Short animated previews of a video (or an animation): a few evenly spread segments, back to back, as
/// MP4, WebM, animated WebP or GIF. One decoded frame and the encoder's state in memory at a time.
public enum VideoPreview {
    /// An encoded preview.
    public struct Result: Sendable {
        /// The encoded file.
        public var data: [UInt8]
        /// The format `data` is in.
        public var format: PreviewFormat
        /// The clip's length: segments x segment length, to the millisecond (GIF: to the centisecond).
        public var durationMs: Int
        /// Frames in the file (identical neighbours may have been merged into one longer frame).
        public var frames: Int
        /// The preview's size in pixels.
        public var width: Int
        /// The preview's height in pixels.
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
                guard let decoded = try reader.nextFrame() else {
                    timeline.finishSegment()
                    break
                }
                let frame = decoded.pointer  // borrowed for this pass of the loop; `decoded` owns it
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
