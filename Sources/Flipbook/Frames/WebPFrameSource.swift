import CWebP

/// Owns the file's bytes for libwebp: the demuxer and the animation decoder read them in place and never
/// copy them, so they must live as long as either.
final class WebPBytes {
    let pointer: UnsafeMutableRawPointer
    let count: Int

    /// Copies the source once (file sources: one read of the whole file).
    init(_ source: any ByteSource) throws {
        count = source.count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 16)
        do {
            try source.withContiguousBytes { bytes in
                if let base = bytes.baseAddress, bytes.count == count { pointer.copyMemory(from: base, byteCount: count) }
            }
        } catch {
            pointer.deallocate()
            throw error
        }
    }

    var bytes: UnsafePointer<UInt8> { UnsafePointer(pointer.assumingMemoryBound(to: UInt8.self)) }
    deinit { pointer.deallocate() }
}

/// libwebp's demuxer over `WebPBytes`: header facts only, no pixel decoding. Freed in `deinit` only.
final class WebPDemuxerHandle {
    let pointer: OpaquePointer
    private let bytes: WebPBytes  // the demuxer points into these

    init(_ bytes: WebPBytes) throws {
        guard let demux = fb_webp_demux(bytes.bytes, bytes.count) else {
            throw FlipbookError(.corrupt, "WebP container is damaged or incomplete", context: "WebPDemux")
        }
        pointer = demux
        self.bytes = bytes
    }

    deinit { WebPDemuxDelete(pointer) }

    /// Canvas, frame count, loop count, alpha flag and each frame's stored duration (ms).
    func header() -> (width: Int, height: Int, frames: Int, loops: Int, alpha: Bool, durations: [Int]) {
        let width = Int(WebPDemuxGetI(pointer, WEBP_FF_CANVAS_WIDTH))
        let height = Int(WebPDemuxGetI(pointer, WEBP_FF_CANVAS_HEIGHT))
        let frames = Int(WebPDemuxGetI(pointer, WEBP_FF_FRAME_COUNT))
        let loops = Int(WebPDemuxGetI(pointer, WEBP_FF_LOOP_COUNT))
        let alpha = WebPDemuxGetI(pointer, WEBP_FF_FORMAT_FLAGS) & ALPHA_FLAG.rawValue != 0
        var durations: [Int] = []
        durations.reserveCapacity(min(frames, 100_000))
        var iterator = WebPIterator()
        if WebPDemuxGetFrame(pointer, 1, &iterator) != 0 {
            repeat { durations.append(Int(iterator.duration)) } while WebPDemuxNextFrame(&iterator) != 0
            WebPDemuxReleaseIterator(&iterator)
        }
        return (width, height, frames, loops, alpha, durations)
    }
}

/// libwebp's WebPAnimDecoder: it applies each frame's blend and dispose and hands back the whole canvas.
/// Freed in `deinit` only.
final class WebPAnimDecoderHandle {
    let pointer: OpaquePointer
    private let bytes: WebPBytes

    init(_ bytes: WebPBytes) throws {
        var options = WebPAnimDecoderOptions()
        guard fb_webp_anim_options_init(&options) != 0 else {
            throw FlipbookError(.libraryUnavailable, "libwebpdemux does not match the headers it was built with")
        }
        options.color_mode = MODE_RGBA  // straight (not premultiplied) alpha, as every other canvas here
        options.use_threads = 0  // one conversion per core already fills the machine
        guard let decoder = fb_webp_anim_decoder_new(bytes.bytes, bytes.count, &options) else {
            throw FlipbookError(.corrupt, "animated WebP cannot be decoded", context: "WebPAnimDecoderNew")
        }
        pointer = decoder
        self.bytes = bytes
    }

    deinit { WebPAnimDecoderDelete(pointer) }

    var hasMoreFrames: Bool { WebPAnimDecoderHasMoreFrames(pointer) != 0 }

    /// The next composited canvas (owned by the decoder, valid until the next call), or nil on a
    /// decoding error.
    func next() -> UnsafePointer<UInt8>? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(pointer, &buffer, &timestamp) != 0, let buffer else { return nil }
        return UnsafePointer(buffer)
    }
}

/// Animated WebP as a `FrameSource`, through libwebp's demuxer (headers, limits) and WebPAnimDecoder
/// (compositing with blend and dispose, over a transparent canvas as browsers and Pillow do: the ANIM
/// background colour is a hint they ignore). Memory: the file, plus libwebp's canvas and one saved copy.
public final class WebPFrameSource: FrameSource {
    public let info: AnimationInfo
    public private(set) var warnings: [String] = []
    private let bytes: WebPBytes
    private let decoder: WebPAnimDecoderHandle
    private let isCancelled: (@Sendable () -> Bool)?

    /// Reads the headers through the demuxer and checks `limits` before the animation decoder allocates.
    public init(source: any ByteSource, limits: AnimationLimits = AnimationLimits(), isCancelled: (@Sendable () -> Bool)? = nil) throws {
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

    public func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        var index = 0, time = 0
        let count = info.width * info.height * 4
        while decoder.hasMoreFrames, index < info.durationsMs.count {
            if isCancelled?() == true { throw FlipbookError(.cancelled, "WebP decoding was cancelled") }
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
