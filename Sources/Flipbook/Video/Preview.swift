/// How to build an animated preview. Every property documents its default.
public struct PreviewOptions: Sendable {
    /// Segments spread across the video. Default 5.
    public var segments = 5
    /// Length of each segment, in seconds. Default 1.
    public var segmentLength = 1.0
    /// Longer side of the clip, in pixels. Default 320.
    public var size = 320
    /// Cap on frames per second (nil: the source's own frames). Default nil.
    public var fps: Double?
    /// Encoder settings (H.264, crf 23, preset medium by default).
    public var video = VideoConversionOptions()

    public init() {}
}

/// Short segments of a video stitched into one silent clip with continuous timestamps: the kind of
/// preview galleries play on hover.
public enum VideoPreview {
    public struct Result: Sendable {
        public var data: [UInt8]
        public var durationMs: Int
        public var frames: Int
        public var width: Int
        public var height: Int
    }

    /// Decodes `segments` windows of `segmentLength` seconds (each from the keyframe at or before its
    /// position), scales and turns them upright, and encodes them back to back. Audio is dropped.
    public static func make(_ input: MediaInput, options: PreviewOptions = PreviewOptions()) throws -> Result {
        guard options.segments > 0, options.segmentLength > 0, options.size > 1 else {
            throw FlipbookError(.invalidArgument, "segments, segment length and size must be positive")
        }
        let reader = try VideoReader.spanning(input, maxPixelSize: options.size, for: "previews")
        let duration = reader.durationSeconds
        let segments = min(options.segments, max(1, Int(duration / options.segmentLength)))
        let length = min(options.segmentLength, duration / Double(segments))
        let minimumGap = options.fps.map { 1 / $0 } ?? 0

        var encoder: FrameEncoder?
        var outMs = 0.0, frames = 0
        var pending: (rgb: [UInt8], pts: Int)?
        var size = Size(width: 0, height: 0)

        func emit(_ image: Image, at ms: Double) throws {
            if encoder == nil {
                size = Size(width: image.width, height: image.height)
                encoder = try FrameEncoder(width: image.width, height: image.height, options: options.video, loopCount: 0)
            }
            let rgb = try encoder!.padded(image)
            if let p = pending {
                guard Int(ms.rounded()) > p.pts else { return }  // timestamps must strictly increase
                try encoder!.encode(p.rgb, pts: p.pts, duration: Int(ms.rounded()) - p.pts)
                frames += 1
            }
            pending = (rgb, Int(ms.rounded()))
        }

        for k in 0..<segments {
            // Centre each window in its share of the video.
            let centre = duration * (Double(k) + 0.5) / Double(segments)
            let start = max(0, min(duration - length, centre - length / 2))
            var first: Double?, lastKept: Double?
            try reader.decode(from: start) { frame in
                guard let t = reader.seconds(frame) else { return false }
                if first == nil {
                    if t + 1e-6 < start - length { return false }  // far before the window (a distant keyframe)
                    first = t
                }
                let offset = t - first!
                if offset >= length - 1e-6 { return true }  // 0.7999999 belongs to the next segment's time
                if let l = lastKept, t - l < minimumGap - 1e-6 { return false }
                lastKept = t
                try emit(try reader.renderer.render(frame), at: outMs + offset * 1000)
                return false
            }
            outMs += length * 1000  // the next segment starts where this one's time ends: no gap, no overlap
        }
        guard var enc = encoder, let last = pending else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        let endMs = Int(outMs.rounded())
        try enc.encode(last.rgb, pts: last.pts, duration: max(1, endMs - last.pts))
        frames += 1
        let data = try enc.finish(endMs: endMs)
        return Result(data: data, durationMs: endMs, frames: frames, width: size.width, height: size.height)
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
