/// Animated GIF previews. One global palette serves every frame: a colour keeps its index from frame
/// to frame, so unchanged pixels can be left transparent and still areas do not flicker between
/// per-frame palettes, and 768 bytes are stored once. The palette has to see every frame before the first
/// is written, so the frames are kept until `finish` as packed RGB at the preview's size (320x180: 173 KB
/// a frame; identical neighbours once), capped by `maxBufferedBytes`; the colour histogram is counted as
/// they arrive. Delays are centiseconds rounded from the cumulative millisecond times, so rounding never
/// accumulates: the GIF ends within 5 ms of the clip.
struct GIFPreviewSink: PreviewSink {
    let options: GIFPreviewOptions
    private var frames: [(rgb: [UInt8], ms: Int)] = []
    private var histogram = ColorHistogram()
    private var size: Size?
    private var bufferedBytes = 0

    /// Checks the options before any frame is decoded.
    init(options: GIFPreviewOptions) throws {
        guard (4...256).contains(options.colors) else {
            throw FlipbookError(.invalidArgument, "GIF palettes have 4-256 entries, not \(options.colors)")
        }
        guard (0...255).contains(options.stillTolerance) else {
            throw FlipbookError(.invalidArgument, "the GIF still tolerance is 0-255, not \(options.stillTolerance)")
        }
        self.options = options
    }

    mutating func add(_ image: Image, atMs ms: Int) throws {
        let frameSize = Size(width: image.width, height: image.height)
        if size == nil { size = frameSize }
        guard frameSize == size else { throw FlipbookError(.codec, "frame size changed from \(size!) to \(frameSize)") }
        let rgb = image.channels == 3 ? image.pixels : image.flattened().pixels
        if let last = frames.last, last.rgb == rgb { return }  // the frame on screen just stays longer
        bufferedBytes += rgb.count
        guard bufferedBytes <= options.maxBufferedBytes else {
            throw FlipbookError(.limitExceeded, "a GIF preview of more than \(frames.count) frames of \(frameSize) would hold over "
                                + "\(options.maxBufferedBytes >> 20) MB until its palette is known; lower the size, segments or fps")
        }
        rgb.withUnsafeBufferPointer { histogram.add(rgb: $0) }
        frames.append((rgb, ms))
    }

    mutating func finish(endMs: Int) throws -> PreviewFile {
        guard let size, !frames.isEmpty else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        let colors = ColorQuantizer.palette(from: histogram, maxColors: options.colors - 1)
        let transparent = UInt8(colors.count)  // the first entry past the colours
        let writer = try GIFFileWriter(width: size.width, height: size.height, palette: colors, tableSize: colors.count + 1)
        try writer.loopForever()
        var mapper = PaletteMapper(width: size.width, height: size.height, palette: colors, transparentIndex: transparent,
                                   dither: options.dither, stillTolerance: options.stillTolerance)
        func centiseconds(_ ms: Int) -> Int { (ms + 5) / 10 }
        var pending: (frame: MappedFrame, ms: Int)?
        var written = 0
        for k in frames.indices {
            let mapped = frames[k].rgb.withUnsafeBufferPointer { mapper.map($0) }
            let ms = frames[k].ms
            frames[k].rgb = []  // done with it
            guard let mapped else { continue }  // nothing to draw: the frame before stays on screen longer
            if let p = pending {
                try writer.put(p.frame, transparentIndex: transparent, delayCentiseconds: centiseconds(ms) - centiseconds(p.ms))
                written += 1
            }
            pending = (mapped, ms)
        }
        frames = []
        if let p = pending {
            try writer.put(p.frame, transparentIndex: transparent, delayCentiseconds: centiseconds(endMs) - centiseconds(p.ms))
            written += 1
        }
        return PreviewFile(data: try writer.finish(), frames: written, size: size, durationMs: centiseconds(endMs) * 10)
    }
}
