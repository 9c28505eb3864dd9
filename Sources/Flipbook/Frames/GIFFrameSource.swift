/// A GIF as a `FrameSource`, through `GIFDecoder`'s own compositing, unchanged: the adapter adds no copy,
/// the decoder's canvas is passed straight on. Two ways to open it:
/// - `init(source:options:limits:)` scans the blocks first (`GIFDecoder.info`, no pixel decoding), so
///   `info` holds the frame count and every duration before the first frame (previews, `frames --at`);
///   the file is then read a second time by the decoder.
/// - `init(streaming:options:limits:)` opens the decoder only, so the file is read and parsed once (GIF to
///   video). `info` starts from the logical screen and grows as frames are decoded; the frame and
///   duration limits are checked as each frame's header is read, before its pixels are decoded.
final class GIFFrameSource: FrameSource {
    /// The scan's report, including raw centisecond delays and truncation; nil when streaming.
    let gifInfo: GIFInfo?
    private let scanned: AnimationInfo?
    private let decoder: GIFDecoder
    private var durationsSeen: [Int] = []

    /// Scans the GIF's blocks (no pixel decoding), checks `limits`, then opens the decoder.
    init(source: any ByteSource, options: GIFDecodeOptions = GIFDecodeOptions(), limits: Limits = Limits()) throws {
        let options = Self.decoding(options, limits)
        let scan = try GIFDecoder.info(source: source, options: options)
        gifInfo = scan
        let info = AnimationInfo(gif: scan)
        try limits.check(info, what: "GIF")
        scanned = info
        decoder = try GIFDecoder(source: source, options: options)
    }

    /// Opens the decoder only: one read of the file. The canvas limit is checked from the logical screen
    /// now; frames, duration and total pixels as each frame's header is read.
    init(streaming source: any ByteSource, options: GIFDecodeOptions = GIFDecodeOptions(), limits: Limits = Limits()) throws {
        gifInfo = nil
        scanned = nil
        decoder = try GIFDecoder(source: source, options: Self.decoding(options, limits))
    }

    private static func decoding(_ options: GIFDecodeOptions, _ limits: Limits) -> GIFDecodeOptions {
        var options = options
        options.limits = limits
        options.maxPixelSize = nil  // the canvas at full size; callers scale
        return options
    }

    /// The scan's facts; when streaming, what the frames decoded so far have shown (canvas size, frames,
    /// durations, the loop count once its extension was read, transparency).
    var info: AnimationInfo {
        if let scanned { return scanned }
        return AnimationInfo(type: .gif, width: decoder.canvasWidth, height: decoder.canvasHeight, frameCount: decoder.framesDecoded,
                             durationsMs: durationsSeen, durationMs: decoder.durationDecodedMs, loopCount: decoder.loopCount,
                             hasAlpha: decoder.sawTransparency, codec: "gif")
    }

    var warnings: [String] { decoder.warnings }

    private struct Stop: Error {}

    func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        do {
            try decoder.forEachFrame { meta, canvas in
                // The scan and the decoder size a zero-size screen by the same rule; if they ever disagreed,
                // consumers would read past the canvas, so it is an error rather than a crash.
                if let scanned, canvas.count != scanned.width * scanned.height * 4 {
                    throw FlipbookError(.corrupt, "GIF canvas is \(decoder.canvasWidth)x\(decoder.canvasHeight), its scan said \(scanned.width)x\(scanned.height)")
                }
                if scanned == nil { durationsSeen.append(meta.durationMs) }
                let frame = AnimationFrame(index: meta.index, presentationTimeMs: meta.presentationTimeMs,
                                           durationMs: meta.durationMs, isPartial: meta.isPartial)
                if try !body(frame, canvas) { throw Stop() }
            }
        } catch is Stop {
            return
        }
    }
}
