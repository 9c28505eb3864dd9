import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Video codecs for GIF conversion, with the libavcodec encoders tried for each, in order.
public enum VideoCodec: String, Sendable, CaseIterable {
    case h264, hevc, vp9, av1

    var encoderNames: [String] {
        switch self {
        case .h264: ["libx264"]
        case .hevc: ["libx265"]
        case .vp9: ["libvpx-vp9"]
        // libaom first: SVT-AV1 1.4 refuses frames under 64 pixels and reorders frames (random access),
        // which would cost the exact last-frame duration; libaom's hidden frames stay inside one packet.
        case .av1: ["libaom-av1", "libsvtav1"]
        }
    }
}

/// Output containers.
public enum VideoContainer: String, Sendable {
    case mp4, webm

    /// The container a file name's extension asks for.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "mp4", "m4v", "mov": self = .mp4
        case "webm": self = .webm
        default: return nil
        }
    }
}

/// How to convert. Every property documents its default.
public struct VideoConversionOptions: Sendable {
    /// Constant rate factor (lower is better quality, bigger): the one used when the quality floor holds,
    /// and where `targetSSIM`'s search starts. Default 28 (x264's is 23): with chroma given 4 QP steps more
    /// than `tune=animation` gives it (see `FrameEncoder`), GIFs keep about the look of ffmpeg's crf 23
    /// `-tune animation` recipe at about 0.8x its bytes (`bench/gif_sweep.py`, `make bench-gif`).
    public var crf = 28
    /// Quality floor for every format. When the video's SSIM against the frames it was made from
    /// (`QualityMeter`) is under this, the file is encoded again at a lower crf (`CRFSearch`, at most three
    /// encodes). nil (the default): `automaticFloor` decides. Ignored when `targetSSIM` is set.
    public var minimumSSIM: Double?
    /// With no `minimumSSIM`, use the source format's floor, `CRFSearch.defaultFloor(for:)`: 0.97 for
    /// animated WebP and APNG, 0.955 for GIF (at most 3 crf steps down, and only while a step gains
    /// `CRFSearch.minimumGain(for:)`). false: `crf` as it is. Default true.
    public var automaticFloor = true
    /// Quality target: the largest crf (1-51) whose SSIM, measured as for `minimumSSIM`, is at least this,
    /// searched per file (bisection, at most six encodes). nil (the default): no search.
    public var targetSSIM: Double?
    /// Encoder speed preset. Default "medium", as x264's.
    public var preset = "medium"
    /// Scale the longer side down while decoding so that no side of the video (padded to even) is over this
    /// (nil: the GIF's size). Default nil.
    public var maxSize: Int?
    /// Transparent pixels are flattened onto this colour. Default white.
    public var background: (r: UInt8, g: UInt8, b: UInt8) = (255, 255, 255)
    /// Default H.264 (High profile).
    public var codec = VideoCodec.h264
    /// Default MP4.
    public var container = VideoContainer.mp4
    /// Encoder threads. 0 (the default): fixed per file from the frame size (`FrameEncoder.threads`), never
    /// from the machine or the number of parallel conversions, because x264 writes different bytes with
    /// different thread counts and outputs must not depend on `--jobs`.
    public var threads = 0
    /// Also produce a JPEG of the first frame at this quality (nil: no poster). Default nil.
    public var posterQuality: Int?
    /// More x264 settings ("key=value:key=value"), after Flipbook's own, for measuring alternatives
    /// (`bench/gif_sweep.py`). Default nil.
    public var x264Params: String?
    /// Decoder limits (canvas, frames, total pixels, cancellation).
    public var decode = GIFDecodeOptions()

    public init() {}
}

/// What a conversion produced.
public struct VideoConversionResult: Sendable {
    /// The encoded video file.
    public var data: [UInt8]
    public var inputBytes: Int
    public var outputBytes: Int { data.count }
    /// Total duration: the sum of the GIF's displayed frame durations.
    public var durationMs: Int
    public var gifFrames: Int
    /// Frames actually encoded: consecutive identical frames are merged into one longer frame.
    public var encodedFrames: Int
    /// The GIF's loop count (0: forever; nil: no loop extension, plays once). Also in the MP4 as `loop_count`.
    public var loopCount: Int?
    public var hadTransparency: Bool
    /// The picture's true size; the encoded size is padded to even numbers with the background colour.
    public var width: Int
    public var height: Int
    public var encodedWidth: Int
    public var encodedHeight: Int
    /// Input bytes / output bytes.
    public var compressionRatio: Double { data.isEmpty ? 0 : Double(inputBytes) / Double(data.count) }
    /// JPEG of the first frame, when asked for.
    public var poster: [UInt8]?
    /// Decoder warnings (a truncated GIF converts the frames it has).
    public var warnings: [String]
    /// The crf of the encode kept.
    public var crf = 0
    /// Its SSIM against the frames it was made from (`QualityMeter`), when measured.
    public var measuredSSIM: Double?
    /// Encodes run to choose the crf (1 without a search).
    public var encodes = 1
}

/// GIF to looping, silent, timing-exact video. Frames come from `GIFDecoder` one at a time; each frame's
/// presentation time is its cumulative displayed GIF delay, in a millisecond time base, never resampled
/// to a constant rate. Output goes to memory through a seekable custom AVIO (faststart included).
public enum GIFToVideo {
    public static func convert(_ source: any ByteSource, options: VideoConversionOptions = VideoConversionOptions()) throws
        -> VideoConversionResult
    {
        try CRFSearch.run(options, type: MediaType.sniff(source)) { pass in
            try convert(try FrameSources.open(source, decode: options.decode), inputBytes: source.count, options: pass)
        }
    }

    /// Converts any `FrameSource` (GIF, animated WebP, APNG) with the same timing guarantees, in one encode
    /// at `options.crf` (a source is read once: the crf search of `minimumSSIM` / `targetSSIM` needs the
    /// `ByteSource` variant). The SSIM is measured when either is set. `inputBytes` is the source file's
    /// size, for the result's ratio.
    public static func convert(_ decoder: any FrameSource, inputBytes: Int, options: VideoConversionOptions = VideoConversionOptions())
        throws -> VideoConversionResult
    {
        let info = decoder.info
        // Rounded down to even: the encoder pads odd sides by one, which must not take a side over the limit.
        let maxSize = options.maxSize.map { max(2, $0 & ~1) }
        var encoder: FrameEncoder?
        var pending: (rgb: [UInt8], pts: Int)?
        var gifFrames = 0, encodedFrames = 0, endMs = 0
        var poster: [UInt8]?
        var size = Size(width: 0, height: 0)

        func handle(_ frame: AnimationFrame, rgba: UnsafeBufferPointer<UInt8>, width: Int, height: Int) throws {
            if encoder == nil {
                size = Size(width: width, height: height)
                encoder = try FrameEncoder(width: width, height: height, options: options, loopCount: info.loopCount,
                                           measure: options.minimumSSIM != nil || options.targetSSIM != nil)
            }
            gifFrames += 1
            endMs = frame.presentationTimeMs + frame.durationMs
            let rgb = encoder!.flatten(rgba)
            if let quality = options.posterQuality, poster == nil {
                poster = try TurboJPEG.encode(Image(width: width, height: height, channels: 3,
                                                    pixels: FrameEncoder.crop(rgb, paddedWidth: encoder!.paddedWidth, to: size)),
                                              quality: quality)
            }
            if let p = pending {
                if p.rgb == rgb { return }  // identical to the frame on screen: it just stays longer
                try encoder!.encode(p.rgb, pts: p.pts, duration: frame.presentationTimeMs - p.pts)
                encodedFrames += 1
            }
            pending = (rgb, frame.presentationTimeMs)
        }

        try decoder.forEachFrame { meta, canvas in
            if let scaled = FrameScaling.scaled(canvas, info: info, maxPixelSize: maxSize) {
                try scaled.pixels.withUnsafeBufferPointer { try handle(meta, rgba: $0, width: scaled.width, height: scaled.height) }
            } else {
                try handle(meta, rgba: canvas, width: info.width, height: info.height)
            }
            return true
        }
        guard var enc = encoder, let last = pending else { throw FlipbookError(.corrupt, "\(info.type) has no frames to convert") }
        try enc.encode(last.rgb, pts: last.pts, duration: endMs - last.pts)
        encodedFrames += 1
        let data = try enc.finish(endMs: endMs)
        return VideoConversionResult(
            data: data, inputBytes: inputBytes, durationMs: endMs, gifFrames: gifFrames, encodedFrames: encodedFrames,
            loopCount: info.loopCount, hadTransparency: info.hasAlpha, width: size.width, height: size.height,
            encodedWidth: enc.paddedWidth, encodedHeight: enc.paddedHeight, poster: poster, warnings: decoder.warnings,
            crf: options.crf, measuredSSIM: enc.meter?.ssim)
    }
}

extension GIFToVideo {
    /// Converts and writes the video to `path` atomically (a temporary file beside it, then rename); the
    /// GIF itself is never replaced. Returns the same result as the in-memory conversion.
    @discardableResult
    public static func convert(_ source: any ByteSource, toPath path: String, options: VideoConversionOptions = VideoConversionOptions(),
                               protecting inputs: [String] = []) throws -> VideoConversionResult {
        let result = try convert(source, options: options)
        var protected = inputs
        if let file = source as? FileByteSource { protected.append(file.path) }
        try AtomicFile.write(result.data, to: path, protecting: protected)
        return result
    }
}

/// One encoder + muxer writing to memory. Frames arrive as padded RGB24 with their pts and duration (ms).
struct FrameEncoder {
    let paddedWidth: Int, paddedHeight: Int
    let width: Int, height: Int
    let background: (UInt8, UInt8, UInt8)
    private let codec: CodecContext
    private let muxer: MemoryMuxer
    private let stream: UnsafeMutablePointer<AVStream>
    private let sws: OpaquePointer
    private let frame: Frame
    private let packet: Packet
    private let held: Packet
    private var hasHeld = false
    private var durations: [Int64: Int64] = [:]
    private let owner: Owner
    private let container: VideoContainer
    /// Decodes what is written and scores it against the input, when asked for (`measure`).
    let meter: QualityMeter?

    /// Frees the scaler when the encoder goes away, on every path.
    final class Owner {
        var sws: OpaquePointer?
        deinit {
            if let sws, let av = try? LibAV.api() { av.sws_freeContext(sws) }
        }
    }

    /// libx264 0.164's MB-tree lookahead (B-frames with mbtree, x264's default) reads heap memory it never
    /// wrote, so the same frames encoded to different bytes depending on what the process had freed before:
    /// concurrent conversions of one GIF differed, and a fresh process under MALLOC_PERTURB_ differs too
    /// (mbtree=0 avoids it but made test patterns 30-80% bigger; b-pyramid=none alone does not). glibc's M_PERTURB 0xFF makes every new heap block
    /// zero, as a fresh process's memory is, so x264 reads zeros and the output is the first-conversion bytes
    /// whatever ran before. Process-wide; set once, before the first encoder opens.
    static let zeroNewHeapBlocks: Void = {
        #if canImport(Glibc)
        // mallopt is in <malloc.h>, which Glibc's module does not export; M_PERTURB is -6 there.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        if let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "mallopt") {
            _ = unsafeBitCast(symbol, to: Mallopt.self)(-6, 0xFF)
        }
        #endif
    }()

    init(width: Int, height: Int, options: VideoConversionOptions, loopCount: Int?, measure: Bool = false) throws {
        Self.zeroNewHeapBlocks
        let av = try LibAV.api()
        self.width = width
        self.height = height
        paddedWidth = width + (width & 1)
        paddedHeight = height + (height & 1)
        background = (options.background.r, options.background.g, options.background.b)
        owner = Owner()
        container = options.container

        if options.container == .webm && (options.codec == .h264 || options.codec == .hevc) {
            throw FlipbookError(.invalidArgument, "WebM holds VP9 or AV1, not \(options.codec); use an .mp4 output")
        }
        guard let encoderCodec = options.codec.encoderNames.lazy.compactMap({ av.avcodec_find_encoder_by_name($0) }).first else {
            throw FlipbookError(.unsupported, "this libavcodec has no \(options.codec) encoder (\(options.codec.encoderNames.joined(separator: ", ")))")
        }
        codec = try CodecContext(codec: encoderCodec)
        let ctx = codec.pointer
        ctx.pointee.width = Int32(paddedWidth)
        ctx.pointee.height = Int32(paddedHeight)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = AVRational(num: 1, den: 1000)
        // No frame-rate hint: measured 1% larger files with the average rate set; x264 follows the timestamps.
        ctx.pointee.thread_count = Int32(options.threads > 0 ? options.threads : Self.threads(width: paddedWidth, height: paddedHeight))
        ctx.pointee.colorspace = AVCOL_SPC_SMPTE170M  // the matrix swscale's default conversion uses
        ctx.pointee.color_range = AVCOL_RANGE_MPEG
        ctx.pointee.color_primaries = AVCOL_PRI_BT709
        ctx.pointee.color_trc = AVCOL_TRC_IEC61966_2_1

        muxer = try MemoryMuxer(formatName: options.container.rawValue)
        if muxer.wantsGlobalHeader { ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
        var codecOptions: [String: String] = [:]
        switch options.codec {
        case .h264:
            // tune=animation (x264's own tuning for flat graphics: B-frames +2, twice the reference frames,
            // psy-rd 0.4, aq-strength 0.6, deblock 1:1) replaced tune=ssim + qcomp 0.8 + bf=0: against a
            // browser's rendering that tuning lost up to 0.037 SSIM to ffmpeg's `-tune animation` recipe on
            // sharp-edged GIFs (chroma paid: without psy x264 drops its chroma QP offset). B-frames cost the
            // exact end (see `finish` and MP4Duration) but save 10-25% on logos and dithered photos.
            // keyint=600 frames between keyframes (-3% bytes). chroma-qp-offset=-6 (tune animation leaves
            // x264's -2): scored as a viewer sees colour (yuv444p SSIM against the browser's frames), flat
            // graphics lose most in chroma, and the extra chroma bits buy more SSIM per byte than a lower
            // crf does (bench/gif_sweep.py, ffmpeg with these settings against the peer, Pillow reference:
            // crf 26 with -2 0.84x the bytes, worst GIF -0.012; crf 28 with -4 0.80x, -0.0115; crf 28 with
            // -6 0.83x, -0.011).
            codecOptions = ["crf": String(options.crf), "preset": options.preset, "profile": "high", "tune": "animation",
                            "x264-params": "keyint=600:chroma-qp-offset=-6" + (options.x264Params.map { ":" + $0 } ?? "")]
        case .hevc:
            codecOptions = ["crf": String(options.crf), "preset": options.preset, "x265-params": "log-level=none:bframes=0"]
        case .vp9:
            codecOptions = ["crf": String(options.crf), "b": "0", "row-mt": "1", "deadline": "good"]
        case .av1:
            // x264's preset names, translated to SVT-AV1's 0-13 presets or libaom's cpu-used 0-8.
            let names = ["veryslow", "slower", "slow", "medium", "fast", "faster", "veryfast", "superfast", "ultrafast"]
            let rank = names.firstIndex(of: options.preset) ?? 3
            let encoderName = String(cString: encoderCodec.pointee.name)
            codecOptions = ["crf": String(options.crf), "b": "0"]
            if encoderName == "libsvtav1" {
                codecOptions["preset"] = String([2, 4, 5, 6, 8, 9, 10, 11, 12][rank])
            } else {
                codecOptions["cpu-used"] = String([1, 2, 3, 4, 5, 6, 6, 7, 8][rank])
            }
        }
        try codec.open(options: codecOptions)

        stream = try muxer.addStream(for: codec)
        if options.codec == .hevc, options.container == .mp4 { stream.pointee.codecpar.pointee.codec_tag = fb_tag_hvc1() }
        if let loopCount { _ = av.av_dict_set(&muxer.pointer.pointee.metadata, "loop_count", String(loopCount), 0) }
        try muxer.writeHeader(options: options.container == .mp4 ? ["movflags": "+faststart+use_metadata_tags"] : [:])
        meter = measure ? try QualityMeter(stream: stream, width: paddedWidth, height: paddedHeight) : nil

        guard let scaler = av.sws_getContext(Int32(paddedWidth), Int32(paddedHeight), AV_PIX_FMT_RGB24, Int32(paddedWidth),
                                             Int32(paddedHeight), AV_PIX_FMT_YUV420P,
                                             Int32(SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INP), nil, nil, nil)
        else { throw FlipbookError(.codec, "cannot create the RGB to YUV converter") }
        sws = scaler
        owner.sws = scaler
        frame = try Frame()
        frame.pointer.pointee.width = Int32(paddedWidth)
        frame.pointer.pointee.height = Int32(paddedHeight)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try LibAV.check(av.av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        packet = try Packet()
        held = try Packet()
    }

    /// Encoder threads for a frame size: one below 0.25 megapixels (most GIFs; a library converts one file
    /// per core), two above. Depends only on the size, so the bytes written never depend on the machine.
    static func threads(width: Int, height: Int) -> Int { width * height < 250_000 ? 1 : 2 }

    /// Zero bytes after the last row: libswscale's SIMD input code reads up to 16 bytes past the end of a
    /// row (valgrind: invalid reads past an exact-size buffer), and libav expects padded input.
    static let inputSlack = 64

    /// RGBA (width x height) composited onto the background, padded to even size with the background,
    /// followed by `inputSlack` zero bytes.
    func flatten(_ rgba: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: paddedWidth * paddedHeight * 3 + Self.inputSlack)
        let (br, bg, bb) = (Int(background.0), Int(background.1), Int(background.2))
        out.withUnsafeMutableBufferPointer { dst in
            for i in 0..<(paddedWidth * paddedHeight) {
                dst[i * 3] = background.0
                dst[i * 3 + 1] = background.1
                dst[i * 3 + 2] = background.2
            }
            for y in 0..<height {
                for x in 0..<width {
                    let s = (y * width + x) * 4, d = (y * paddedWidth + x) * 3
                    let a = Int(rgba[s + 3])
                    if a == 255 {
                        dst[d] = rgba[s]; dst[d + 1] = rgba[s + 1]; dst[d + 2] = rgba[s + 2]
                    } else if a > 0 {  // only after downscaling: blend
                        dst[d] = UInt8((Int(rgba[s]) * a + br * (255 - a) + 127) / 255)
                        dst[d + 1] = UInt8((Int(rgba[s + 1]) * a + bg * (255 - a) + 127) / 255)
                        dst[d + 2] = UInt8((Int(rgba[s + 2]) * a + bb * (255 - a) + 127) / 255)
                    }
                }
            }
        }
        return out
    }

    static func crop(_ rgb: [UInt8], paddedWidth: Int, to size: Size) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(size.width * size.height * 3)
        for y in 0..<size.height { out.append(contentsOf: rgb[(y * paddedWidth * 3)..<(y * paddedWidth * 3 + size.width * 3)]) }
        return out
    }

    /// Converts and encodes one frame shown from `pts` for `duration` milliseconds.
    mutating func encode(_ rgb: [UInt8], pts: Int, duration: Int) throws {
        let av = try LibAV.api()
        try LibAV.check(av.av_frame_make_writable(frame.pointer), "av_frame_make_writable")
        try rgb.withUnsafeBufferPointer { src in
            try SwsScale.packed(src.baseAddress!, rowBytes: paddedWidth * 3, height: paddedHeight, into: frame.pointer, with: sws)
        }
        frame.pointer.pointee.pts = Int64(pts)
        durations[Int64(pts)] = Int64(max(1, duration))
        try rgb.withUnsafeBufferPointer { try meter?.keep($0.baseAddress!, pts: Int64(pts), durationMs: max(1, duration)) }
        try LibAV.check(av.avcodec_send_frame(codec.pointer, frame.pointer), "encoding a frame")
        try drain()
    }

    /// Writes every packet the encoder has ready, holding back the newest one: the MP4 muxer takes the
    /// media's end from the last packet (its dts plus its duration), which must reach the GIF's end, and
    /// that is only known in `finish`.
    private mutating func drain() throws {
        let av = try LibAV.api()
        while true {
            let status = av.avcodec_receive_packet(codec.pointer, packet.pointer)
            if status == LibAV.eagain || status == LibAV.eof { return }
            try LibAV.check(status, "encoding")
            let p = packet.pointer
            p.pointee.duration = durations.removeValue(forKey: p.pointee.pts) ?? 0
            try meter?.decode(p)
            if hasHeld { try write(held.pointer) }
            av.av_packet_move_ref(held.pointer, p)
            hasHeld = true
        }
    }

    private func write(_ p: UnsafeMutablePointer<AVPacket>) throws {
        try muxer.write(p, from: codec.pointer.pointee.time_base, to: stream)
    }

    /// Flushes the encoder, writes the trailer (and moves the index to the front) and returns the file.
    /// `endMs` is when the last frame stops being shown: the file's duration.
    mutating func finish(endMs: Int) throws -> [UInt8] {
        let av = try LibAV.api()
        try LibAV.check(av.avcodec_send_frame(codec.pointer, nil), "flushing the encoder")
        try drain()
        if hasHeld {
            // The last packet decoded must carry the media to the GIF's end: from its decode time. Without
            // B-frames that is its own display time; with them it is a frame shown earlier, and the longer
            // duration also pushes the edit list past the end, which MP4Duration puts back.
            let p = held.pointer
            p.pointee.duration = max(1, p.pointee.duration, Int64(endMs) - (p.pointee.dts == LibAV.noPTS ? p.pointee.pts : p.pointee.dts))
            try write(p)
            hasHeld = false
        }
        try meter?.decode(nil)
        var bytes = try muxer.finish()
        if container == .mp4 { MP4Duration.set(&bytes, milliseconds: endMs) }
        return bytes
    }
}
