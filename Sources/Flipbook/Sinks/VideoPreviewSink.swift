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
        guard let enc = encoder, let last = pending else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        try enc.encode(last.rgb, pts: last.ms, duration: max(1, endMs - last.ms))
        let data = try enc.finish(endMs: endMs)
        return PreviewFile(data: data, frames: frames + 1, size: Size(width: enc.width, height: enc.height), durationMs: endMs)
    }
}
