import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Where in a video the poster comes from.
public enum PosterPosition: Sendable, Equatable {
    /// A fraction of the duration (0.1 = 10%, ffmpegthumbnailer's default).
    case fraction(Double)
    /// Seconds from the start.
    case seconds(Double)

    /// Parses "12.5s", "1500ms", "10%" or a bare number of seconds.
    public init?(_ text: String) {
        let t = text.filter { $0 != " " }.lowercased()
        if t.hasSuffix("%"), let v = Double(t.dropLast()), v >= 0 { self = .fraction(v / 100) }
        else if t.hasSuffix("ms"), let v = Double(t.dropLast(2)), v >= 0 { self = .seconds(v / 1000) }
        else if t.hasSuffix("s"), let v = Double(t.dropLast()), v >= 0 { self = .seconds(v) }
        else if let v = Double(t), v >= 0 { self = .seconds(v) }
        else { return nil }
    }

    /// Seconds from the start in a video of `duration` seconds.
    func seconds(duration: Double) -> Double {
        switch self {
        case .fraction(let f): duration * f
        case .seconds(let s): s
        }
    }
}

/// How to pick the poster frame. Every property documents its default.
public struct PosterOptions: Sendable {
    /// Default 10% of the duration.
    public var position = PosterPosition.fraction(0.1)
    /// false (default): seek to the keyframe before the position and take the first good frame from
    /// there; true: decode up to the exact time.
    public var exact = false
    /// Skip near-uniform frames (black, white, a single colour) and look further along. Default true.
    public var skipUniformFrames = true
    /// false (default): the first good frame. true: the most representative of a window of good frames,
    /// the one whose colour histogram is closest to the window's mean (ffmpeg's `thumbnail` filter idea).
    public var representative = false
    /// Good frames compared in representative mode. Default 30 (about a second of video).
    public var windowFrames = 30
    /// Largest coded frame accepted, in pixels. Default 8K x 8K.
    public var maxCodedPixels = 8192 * 8192
    /// Most frames decoded while looking for a good one. Default 300.
    public var maxFramesScanned = 300
    /// Most video time decoded past the starting point while looking, in seconds. Default 60.
    public var maxSecondsScanned = 60.0
    /// Wall-clock budget for the search, in seconds. Default 10. When it runs out the best frame so far
    /// is the poster; with `exact`, not reaching the time is a `limitExceeded` error.
    public var timeBudget = 10.0

    public init() {}
}

/// An opened video: its default stream, a decoder and a renderer. Seeks and decodes forward from any
/// time; one decoded frame in memory at a time. Posters and storyboards are built on it.
final class VideoReader {
    let format: FormatInput
    let streamIndex: Int
    let stream: UnsafeMutablePointer<AVStream>
    let codec: CodecContext
    let renderer: FrameRenderer
    /// The container's (or stream's) duration; 0 if unknown.
    let durationSeconds: Double
    private let packet: Packet
    private let frame: Frame
    private let timeBase: AVRational
    private let startTS: Int64

    /// `forwardPass`: the caller decodes long runs of consecutive frames (storyboards), so frame threading
    /// pays; otherwise one thread (see below).
    init(_ input: MediaInput, request: ThumbnailRequest, maxCodedPixels: Int, forwardPass: Bool = false) throws {
        let av = try LibAV.api()
        // MP4/MOV/Matroska headers carry the size and pixel format; probing (decoding ahead) is only
        // needed when they do not, and would read much more of the file than one poster needs.
        format = try FormatInput(source: input.source, probeStreams: false)
        var index = try PosterExtractor.videoStream(format)
        let known = format.streams[index].pointee.codecpar.pointee
        if known.width <= 0 || known.height <= 0 {
            try format.probeStreams()
            index = try PosterExtractor.videoStream(format)
        }
        streamIndex = index
        stream = format.streams[index]
        let par = stream.pointee.codecpar!
        let limit = min(maxCodedPixels, input.limits.maxPixels)
        guard Int(par.pointee.width) * Int(par.pointee.height) <= limit else {
            throw FlipbookError(.limitExceeded, "video frames are \(par.pointee.width)x\(par.pointee.height), over the pixel limit")
        }
        codec = try CodecContext.decoder(for: par.pointee.codec_id)
        try LibAV.check(av.avcodec_parameters_to_context(codec.pointer, par), "codec parameters")
        // One thread: frame threading would decode (and hold) a frame per thread before returning the
        // first, and posters and storyboards need the first frame after a keyframe.
        codec.pointer.pointee.thread_count = 1
        if forwardPass {
            codec.pointer.pointee.thread_count = Self.frameThreads(width: Int(par.pointee.width), height: Int(par.pointee.height))
            codec.pointer.pointee.thread_type = FF_THREAD_FRAME
        }
        codec.pointer.pointee.max_pixels = Int64(limit)
        try codec.open()
        timeBase = stream.pointee.time_base
        startTS = stream.pointee.start_time != LibAV.noPTS ? stream.pointee.start_time : 0
        let d = format.pointer.pointee.duration
        if d != LibAV.noPTS, d > 0 {
            durationSeconds = Double(d) / Double(fb_av_time_base())
        } else if stream.pointee.duration != LibAV.noPTS, stream.pointee.duration > 0 {
            durationSeconds = Double(stream.pointee.duration) * Double(timeBase.num) / Double(timeBase.den)
        } else {
            durationSeconds = 0
        }
        renderer = try FrameRenderer(format: format, stream: stream, request: request)
        packet = try Packet()
        frame = try Frame()
    }

    /// Frame threads for a forward pass: each extra thread holds one more decoded frame, so as many as the
    /// cores allow (at most 4) while the extra frames stay within 64 MB: 4K gets up to 3, 1080p up to 4, 8K
    /// none (its 5-6 reference frames already take ~270 MB; a second thread would pass the 300 MB budget).
    static func frameThreads(width: Int, height: Int) -> Int32 {
        let frameBytes = max(1, width * height * 3)  // up to 4:2:0 at 16 bits per sample
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return Int32(max(1, min(4, cores, 1 + (64 << 20) / frameBytes)))
    }

    /// A reader for work that spans the whole video (previews, storyboards): `input` must be a video of
    /// known duration, decoded at up to 8K x 8K, rendered to `maxPixelSize`.
    static func spanning(_ input: MediaInput, maxPixelSize: Int, for what: String, forwardPass: Bool = false) throws -> VideoReader {
        guard input.type.isVideo else { throw FlipbookError(.unsupported, "\(what) are made from videos, not \(input.type)") }
        let reader = try VideoReader(input, request: ThumbnailRequest(maxPixelSize: maxPixelSize), maxCodedPixels: 8192 * 8192,
                                     forwardPass: forwardPass)
        guard reader.durationSeconds > 0 else { throw FlipbookError(.unsupported, "the video's duration is unknown") }
        return reader
    }

    /// Stream timestamp of a time in seconds from the start.
    func timestamp(_ seconds: Double) -> Int64 {
        startTS + Int64(seconds * Double(timeBase.den) / Double(timeBase.num))
    }

    /// Seconds from the start for a frame's timestamp.
    func seconds(_ frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        let pts = frame.pointee.best_effort_timestamp
        guard pts != LibAV.noPTS else { return nil }
        return Double(pts - startTS) * Double(timeBase.num) / Double(timeBase.den)
    }

    /// Seeks to the keyframe at or before `seconds` (from the start if the container cannot seek) and
    /// forgets what the decoder held.
    func seek(to seconds: Double) throws {
        let av = try LibAV.api()
        av.avcodec_flush_buffers(codec.pointer)
        sawEnd = false
        if seconds > 0 || format.pointer.pointee.pb.pointee.pos > 0 {
            if av.av_seek_frame(format.pointer, Int32(streamIndex), timestamp(seconds), AVSEEK_FLAG_BACKWARD) < 0 {
                _ = av.av_seek_frame(format.pointer, Int32(streamIndex), timestamp(0), AVSEEK_FLAG_BACKWARD)
            }
        }
    }

    private var sawEnd = false
    /// Frames the decoder has returned so far (tests check that dense storyboards decode each only once).
    private(set) var framesDecoded = 0

    /// The next decoded frame in display order, valid until the next call; nil at the end of the stream.
    /// Damaged packets and frames are skipped.
    func nextFrame() throws -> UnsafeMutablePointer<AVFrame>? {
        try Cancellation.check("video decoding")  // posters, storyboards, previews and bundles all decode here
        let av = try LibAV.api()
        av.av_frame_unref(frame.pointer)
        while true {
            let received = av.avcodec_receive_frame(codec.pointer, frame.pointer)
            if received >= 0 {
                framesDecoded += 1
                return frame.pointer
            }
            if sawEnd { return nil }  // drained
            let status = av.av_read_frame(format.pointer, packet.pointer)
            if status < 0 {
                sawEnd = true
                _ = av.avcodec_send_packet(codec.pointer, nil)
                continue
            }
            defer { av.av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == Int32(streamIndex) else { continue }
            _ = av.avcodec_send_packet(codec.pointer, packet.pointer)  // a damaged packet: try the next one
        }
    }

    /// Seeks to the keyframe at or before `seconds` and decodes only it, draining the decoder at once: a
    /// stream with B-frames would otherwise decode (and hold) the next two or three frames before returning
    /// it, for reordering. nil if the first packet there is not a keyframe or does not decode. The decoder is
    /// left drained: seek before decoding further.
    func keyframe(at seconds: Double) throws -> UnsafeMutablePointer<AVFrame>? {
        try seek(to: seconds)
        let av = try LibAV.api()
        av.av_frame_unref(frame.pointer)
        while av.av_read_frame(format.pointer, packet.pointer) >= 0 {
            defer { av.av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == Int32(streamIndex) else { continue }
            guard packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0, av.avcodec_send_packet(codec.pointer, packet.pointer) >= 0,
                  av.avcodec_send_packet(codec.pointer, nil) >= 0, av.avcodec_receive_frame(codec.pointer, frame.pointer) >= 0
            else { return nil }
            framesDecoded += 1
            return frame.pointer
        }
        return nil
    }

    /// Seeks to the keyframe at or before `seconds` and calls `visit` with each decoded frame, in order,
    /// until it returns true or the stream ends.
    func decode(from seconds: Double, _ visit: (UnsafeMutablePointer<AVFrame>) throws -> Bool) throws {
        try seek(to: seconds)
        while let frame = try nextFrame() {
            if try visit(frame) { return }
        }
    }
}

/// Video posters: one decoded frame in memory at a time, scaled by libswscale straight to the output.
enum PosterExtractor {
    static func poster(_ input: MediaInput, request: ThumbnailRequest, options: PosterOptions) throws -> Image {
        let av = try LibAV.api()
        let reader = try VideoReader(input, request: request, maxCodedPixels: options.maxCodedPixels)
        var target = options.position.seconds(duration: reader.durationSeconds)
        // Deblocking smooths 4x4-16x16 block edges; at a quarter of the size or less they average away in the
        // thumbnail, so the fast path skips the loop filter (H.264 decodes ~12% faster, HEVC ~15%; mpv's
        // skiploopfilter trade). Not with --exact: those frames are predicted from many unfiltered ones.
        let par = reader.stream.pointee.codecpar.pointee
        let plan = ThumbnailPlan.make(source: Size(width: Int(par.width), height: Int(par.height)),
                                      maxPixelSize: request.maxPixelSize, fit: request.fit, upscale: request.upscale)
        if !options.exact, plan.scale <= 0.25 { reader.codec.pointer.pointee.skip_loop_filter = AVDISCARD_ALL }
        let pastEnd = reader.durationSeconds > 0 && target >= reader.durationSeconds
        if pastEnd { target = max(0, reader.durationSeconds - 2) }  // decode the tail and keep the last frame
        // The fast path's usual answer is the keyframe the seek lands on: decode just that one first (1080p
        // H.264 with B-frames: 8.5 MB less at the peak). A uniform one falls through to the search below.
        if !options.exact, !options.representative, !pastEnd, let frame = try reader.keyframe(at: target) {
            guard options.skipUniformFrames else { return try reader.renderer.render(frame) }
            let (signature, image) = try FrameSignature.of(frame) { try reader.renderer.render(frame) }
            if !signature.isUniform() { return try image ?? reader.renderer.render(frame) }
        }
        let last = try Frame(), fallback = try Frame()
        var haveLast = false, haveFallback = false, scanned = 0, firstSeconds: Double?
        var chosen: Image?
        var candidates: [(signature: FrameSignature, image: Image)] = []
        let clock = ContinuousClock(), started = clock.now
        let budget = Duration.milliseconds(Int64(options.timeBudget * 1000))
        try reader.decode(from: target) { frame in
            if pastEnd {
                av.av_frame_unref(last.pointer)
                _ = av.av_frame_ref(last.pointer, frame)
                haveLast = true
                return false
            }
            let overBudget = clock.now - started > budget
            let t = reader.seconds(frame)
            if options.exact, let t, t + 1e-6 < target {
                if overBudget { throw FlipbookError(.limitExceeded, "the \(options.timeBudget) s time budget ran out before \(target) s") }
                return false
            }
            scanned += 1
            if firstSeconds == nil { firstSeconds = t }
            let overLimit = overBudget || scanned > options.maxFramesScanned
                || (t ?? 0) - (firstSeconds ?? 0) > options.maxSecondsScanned
            if overLimit, haveFallback || !candidates.isEmpty { return true }  // settle for the best so far
            guard options.skipUniformFrames || options.representative else {
                chosen = try reader.renderer.render(frame)
                return true
            }
            // Judge the decoded planes; scale only frames that are kept (or formats without planes).
            let (signature, image) = try FrameSignature.of(frame) { try reader.renderer.render(frame) }
            if signature.isUniform() {
                if !haveFallback { haveFallback = av.av_frame_ref(fallback.pointer, frame) >= 0 }
                return false
            }
            let picture = try image ?? reader.renderer.render(frame)
            guard options.representative else {
                chosen = picture
                return true
            }
            candidates.append((signature, picture))
            return candidates.count >= options.windowFrames
        }
        if let chosen { return chosen }
        if !candidates.isEmpty { return Self.mostRepresentative(candidates.map { ($0.signature, $0.image) }) }
        if pastEnd, haveLast { return try reader.renderer.render(last.pointer) }
        if haveFallback { return try reader.renderer.render(fallback.pointer) }
        throw FlipbookError(.corrupt, "no video frame could be decoded")
    }

    /// The candidate whose histogram is closest to the mean of all candidates' histograms.
    static func mostRepresentative(_ candidates: [(FrameSignature, Image)]) -> Image {
        let count = Double(candidates.count)
        var mean = [Double](repeating: 0, count: candidates[0].0.histogram.count)
        for (signature, _) in candidates {
            for (i, v) in signature.histogram.enumerated() where i < mean.count { mean[i] += v / count }
        }
        return candidates.min { $0.0.distance(to: mean) < $1.0.distance(to: mean) }!.1
    }

    /// The default video stream, never an attached picture (cover art).
    static func videoStream(_ format: FormatInput) throws -> Int {
        let av = try LibAV.api()
        let streams = format.streams
        func usable(_ i: Int) -> Bool {
            streams[i].pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && streams[i].pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }
        let best = Int(av.av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
        if best >= 0, usable(best) { return best }
        if let other = streams.indices.first(where: usable) { return other }
        if streams.contains(where: { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO }) {
            throw FlipbookError(.unsupported, "the only picture in this file is attached cover art, not video")
        }
        throw FlipbookError(.unsupported, "the file has no video stream (audio only?)")
    }

    /// Black, white or a single flat colour: no channel of the image spreads by 6 levels or more.
    static func isNearlyUniform(_ image: Image) -> Bool {
        image.width * image.height == 0 || FrameSignature(image: image).isUniform(threshold: 6)
    }
}

/// Scales decoded frames straight to the thumbnail with libswscale (Lanczos), honouring the stream's
/// colour matrix and range, its sample aspect ratio and its display matrix (rotation and mirroring).
final class FrameRenderer {
    let orientation: Orientation
    let request: ThumbnailRequest
    let format: FormatInput
    let stream: UnsafeMutablePointer<AVStream>
    private var sws: OpaquePointer?
    private let shrunk: Frame
    private var swsKey: (Int32, Int32, Int32, Int32) = (0, 0, -1, -1)

    init(format: FormatInput, stream: UnsafeMutablePointer<AVStream>, request: ThumbnailRequest) throws {
        self.format = format
        self.stream = stream
        self.request = request
        orientation = VideoPipeline.orientation(of: stream)
        shrunk = try Frame()
    }

    deinit {
        if let sws, let av = try? LibAV.api() { av.sws_freeContext(sws) }
    }

    /// AV_PIX_FMT_RGB48 is a C macro for the native-endian variant.
    #if _endian(little)
    static let rgb48 = AV_PIX_FMT_RGB48LE
    #else
    static let rgb48 = AV_PIX_FMT_RGB48BE
    #endif

    func render(_ frame: UnsafeMutablePointer<AVFrame>) throws -> Image {
        let av = try LibAV.api()
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        guard w > 0, h > 0 else { throw FlipbookError(.corrupt, "decoded an empty frame") }
        // Anamorphic pixels: the stored width times the sample aspect ratio is the displayed width.
        let sar = av.av_guess_sample_aspect_ratio(format.pointer, stream, frame)
        let aspect = sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
        let displayW = max(1, Int((Double(w) * aspect).rounded()))
        let stored = Size(width: displayW, height: h)
        let shown = orientation.swapsAxes ? stored.transposed : stored
        let plan = ThumbnailPlan.make(source: shown, maxPixelSize: request.maxPixelSize, fit: request.fit,
                                      upscale: request.upscale).stored(for: orientation)
        // Scale the whole frame so the planned crop has the output size, then crop the centre.
        let scaledW = max(plan.output.width, Int((Double(displayW) * plan.scale).rounded()))
        let scaledH = max(plan.output.height, Int((Double(h) * plan.scale).rounded()))
        // Shrink by whole factors first when the reduction is large; Lanczos then does the last 2-4x.
        var source = frame
        let k = FrameShrinker.factor(width: w, height: h, scaledWidth: scaledW, scaledHeight: scaledH)
        if k > 1, try FrameShrinker.shrink(frame, by: k, into: shrunk) { source = shrunk.pointer }
        let sw = source.pointee.width, sh = source.pointee.height
        // HDR goes through 16-bit RGB and the tone mapper; everything else straight to 8-bit RGB.
        let toneMapper = ToneMapper(frame: frame)
        let output = toneMapper == nil ? AV_PIX_FMT_RGB24 : Self.rgb48
        if sws == nil || swsKey != (sw, sh, source.pointee.format, output.rawValue) {
            if let sws { av.sws_freeContext(sws) }
            let flags = Int32(SWS_LANCZOS | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP)
            sws = av.sws_getContext(sw, sh, AVPixelFormat(rawValue: source.pointee.format), Int32(scaledW), Int32(scaledH),
                                    output, flags, nil, nil, nil)
            guard let sws else { throw FlipbookError(.unsupported, "cannot convert this video's pixel format") }
            swsKey = (sw, sh, source.pointee.format, output.rawValue)
            // The stream's matrix (BT.601/709/2020) and range; RGB out is full range.
            let matrix: Int32
            switch frame.pointee.colorspace {
            case AVCOL_SPC_BT709: matrix = Int32(SWS_CS_ITU709)
            case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = Int32(SWS_CS_BT2020)
            case AVCOL_SPC_UNSPECIFIED: matrix = Int32(h >= 720 ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            default: matrix = Int32(SWS_CS_DEFAULT)
            }
            let fullRange: Int32 = frame.pointee.color_range == AVCOL_RANGE_JPEG ? 1 : 0
            _ = av.sws_setColorspaceDetails(sws, av.sws_getCoefficients(matrix), fullRange, av.sws_getCoefficients(Int32(SWS_CS_DEFAULT)),
                                            1, 0, 1 << 16, 1 << 16)
        }
        var pixels = [UInt8](repeating: 0, count: scaledW * scaledH * 3)
        if let toneMapper {
            var wide = [UInt16](repeating: 0, count: scaledW * scaledH * 3)
            try wide.withUnsafeMutableBufferPointer { dst in
                try dst.baseAddress!.withMemoryRebound(to: UInt8.self, capacity: dst.count * 2) {
                    try SwsScale.frame(source, sourceHeight: Int(sh), into: $0, rowBytes: scaledW * 6, expectedRows: scaledH, with: sws!)
                }
            }
            pixels.withUnsafeMutableBufferPointer { dst in
                wide.withUnsafeBufferPointer { toneMapper.map($0.baseAddress!, to: dst.baseAddress!, count: scaledW * scaledH) }
            }
        } else {
            try pixels.withUnsafeMutableBufferPointer { dst in
                try SwsScale.frame(source, sourceHeight: Int(sh), into: dst.baseAddress!, rowBytes: scaledW * 3, expectedRows: scaledH, with: sws!)
            }
        }
        let scaled = Image(width: scaledW, height: scaledH, channels: 3, pixels: pixels)
        let cropped = StillPipeline.cropCentre(scaled, to: plan.output)
        return orientation.apply(to: cropped)
    }
}
