/// A GIF as a `FrameSource`: the block scan (`GIFDecoder.info`) for the header facts, then `GIFDecoder`'s
/// own compositing, unchanged. The adapter adds no copy: the decoder's canvas is passed straight on.
final class GIFFrameSource: FrameSource {
    let info: AnimationInfo
    /// The scan's own report, including raw centisecond delays and truncation.
    let gifInfo: GIFInfo
    private let decoder: GIFDecoder

    /// Scans the GIF's blocks (no pixel decoding), checks `limits`, then opens the decoder.
    init(source: any ByteSource, options: GIFDecodeOptions = GIFDecodeOptions(), limits: Limits = Limits()) throws {
        var options = options
        options.limits = limits
        options.maxPixelSize = nil  // the canvas at full size; callers scale
        let scan = try GIFDecoder.info(source: source, options: options)
        gifInfo = scan
        info = AnimationInfo(type: .gif, width: scan.width, height: scan.height, frameCount: scan.frameCount,
                             durationsMs: scan.delays.map { GIFTiming.displayedMilliseconds(centiseconds: $0) },
                             durationMs: scan.durationMs, loopCount: scan.loopCount, hasAlpha: scan.hasTransparency, codec: "gif")
        try limits.check(info, what: "GIF")
        decoder = try GIFDecoder(source: source, options: options)
    }

    var warnings: [String] { decoder.warnings }

    private struct Stop: Error {}

    func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        do {
            try decoder.forEachFrame { meta, canvas in
                // The scan and the decoder size a zero-size screen by the same rule; if they ever disagreed,
                // consumers would read past the canvas, so it is an error rather than a crash.
                guard canvas.count == info.width * info.height * 4 else {
                    throw FlipbookError(.corrupt, "GIF canvas is \(decoder.canvasWidth)x\(decoder.canvasHeight), its scan said \(info.width)x\(info.height)")
                }
                let frame = AnimationFrame(index: meta.index, presentationTimeMs: meta.presentationTimeMs,
                                           durationMs: meta.durationMs, isPartial: meta.isPartial)
                if try !body(frame, canvas) { throw Stop() }
            }
        } catch is Stop {
            return
        }
    }
}
