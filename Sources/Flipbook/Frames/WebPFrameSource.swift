import CWebP

/// Animated WebP as a `FrameSource`, through libwebp's demuxer (headers, limits) and WebPAnimDecoder
/// (compositing with blend and dispose, over a transparent canvas as browsers and Pillow do: the ANIM
/// background colour is a hint they ignore). Memory: the file, plus libwebp's canvas and one saved copy.
final class WebPFrameSource: FrameSource {
    let info: AnimationInfo
    private(set) var warnings: [String] = []
    private let bytes: WebPBytes
    private let decoder: WebPAnimDecoderHandle
    private let isCancelled: (@Sendable () -> Bool)?

    /// Reads the headers through the demuxer and checks `limits` before the animation decoder allocates.
    init(source: any ByteSource, limits: Limits = Limits(), isCancelled: (@Sendable () -> Bool)? = nil) throws {
        bytes = try WebPBytes(source)
        let header = try WebPDemuxerHandle(bytes).header()
        guard header.width > 0, header.height > 0, header.frames > 0 else {
            throw FlipbookError(.corrupt, "animated WebP declares \(header.width)x\(header.height) and \(header.frames) frames")
        }
        let durations = header.durations.map(AnimationTiming.displayedMilliseconds)
        info = AnimationInfo(type: .animatedWebP, width: header.width, height: header.height, frameCount: header.frames,
                             durationsMs: durations, durationMs: durations.reduce(0, +), loopCount: header.loops,
                             hasAlpha: header.alpha, codec: "webp")
        try limits.check(info, what: "animated WebP")
        decoder = try WebPAnimDecoderHandle(bytes)
        self.isCancelled = isCancelled
    }

    func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        var index = 0, time = 0
        let count = info.width * info.height * 4
        while decoder.hasMoreFrames, index < info.durationsMs.count {
            if isCancelled?() == true || Cancellation.isRequested { throw FlipbookError(.cancelled, "WebP decoding was cancelled") }
            guard let canvas = decoder.next() else {
                let error = FlipbookError(.corrupt, "animated WebP frame \(index) cannot be decoded", context: "WebPAnimDecoderGetNext")
                if index == 0 { throw error }
                warnings.append("decoding stopped after frame \(index - 1): \(error)")
                return
            }
            let duration = info.durationsMs[index]
            let frame = AnimationFrame(index: index, presentationTimeMs: time, durationMs: duration)
            if try !body(frame, UnsafeBufferPointer(start: canvas, count: count)) { return }
            index += 1
            time += duration
        }
    }
}
