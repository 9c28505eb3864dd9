import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// One encoder + muxer writing to memory. Frames arrive as padded RGB24 with their pts and duration (ms).
/// A class, the single owner of its codec, muxer, scaler, frame and packets: a copy can never share them.
package final class FrameEncoder {
    package let paddedWidth: Int, paddedHeight: Int
    package let width: Int, height: Int
    package let background: (UInt8, UInt8, UInt8)
    private let codec: CodecContext
    private let muxer: MemoryMuxer
    private let stream: UnsafeMutablePointer<AVStream>
    private let scaler: SwsScaler
    private let frame: Frame
    private let packet: Packet
    private let held: Packet
    private var hasHeld = false
    /// Whether the first packet is still to come: it carries x264's option-string SEI (`X264InfoSEI`).
    private var firstPacket = true
    private let isH264: Bool
    private var durations: [Int64: Int64] = [:]
    /// How samples are timed, and so whether B-frames are used.
    private let timing: SampleTiming
    /// The decode time of the first packet (negative with B-frames), nil before it: the last packet's
    /// duration is counted from it so that the media lasts exactly the animation.
    private var firstDts: Int64?
    /// Frames sent to the encoder, and the presentation time of the latest, in time-base units.
    private var framesSent = 0, lastPts: Int64 = -1
    private let container: VideoContainer
    /// Decodes what is written and scores it against the input, when asked for (`measure`).
    package let meter: QualityMeter?
    /// The container's loop_count tag (nil: none).
    package private(set) var loopCount: Int?

    /// `timing`: how the samples are timed (`SampleTiming`); anything but `variable` uses B-frames and
    /// writes a rate into the H.264 timing info (see the x264 settings).
    package init(width: Int, height: Int, options: VideoConversionOptions, loopCount: Int?, measure: Bool = false,
                 timing: SampleTiming = .variable) throws {
        let av = try LibAV.api()
        let timing = options.codec == .h264 ? timing : .variable
        self.timing = timing
        self.width = width
        self.height = height
        paddedWidth = width + (width & 1)
        paddedHeight = height + (height & 1)
        background = (options.background.r, options.background.g, options.background.b)
        container = options.container
        isH264 = options.codec == .h264

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
        // Milliseconds, one unit per frame at a constant rate (then also the frame rate, which x264 writes
        // into the H.264 timing info), or units in which the average sample is whole (`SampleTiming`). No
        // frame-rate hint otherwise: measured 1% larger files with the average rate set; x264 follows the
        // timestamps.
        let timeBase = timing.timeBase
        ctx.pointee.time_base = AVRational(num: Int32(timeBase.num), den: Int32(timeBase.den))
        if case .constant = timing, let rate = timing.frameRate { ctx.pointee.framerate = AVRational(num: Int32(rate.num), den: Int32(rate.den)) }
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
            // sharp-edged GIFs (chroma paid: without psy x264 drops its chroma QP offset).
            // B-frames (x264's own choice, up to 5 with tune=animation) with a constant or averaged timing,
            // none with a variable one (`SampleTiming`, which says why): with B-frames ffmpeg 5.1's MP4 reader
            // reads no packet's own duration and gives every packet one from the H.264 timing info, which a
            // millisecond time base makes 1000 fps, a rate it ignores, so ffmpeg pipelines downstream (a
            // remux, a transcode, `fps` sampling) lost the last frame's stay: 2.24 s instead of 2.40 s for
            // glide's interlaced_transparent_gif.gif. At a constant rate the timing info says the real one;
            // averaged, it says the average sample (`H264TimingInfo`). B-frames saved 10-25% on logos and
            // dithered photos at a constant rate, 40% on glide's large_giphy_logo.gif (85 frames, the last
            // held 370 ms) averaged; on screen recordings whose frames last 60 ms to 1 s they saved nothing
            // and the repeated last picture cost 10-30% (MB-tree credits every frame before it), hence
            // `SampleTiming.planned`'s narrow rule.
            // keyint=600 frames between keyframes (-3% bytes); keyint-min=60, what x264 derives from a
            // millisecond time base, also at a constant rate: there x264 derives it from the frame rate, so
            // at 1 fps every scene cut became an IDR frame, which forgets every reference: welcome2.gif,
            // six frames alternating between two pictures, took 2.0x the bytes. Measured and not the default (bench/gif_sweep.py,
            // ffmpeg with these settings against the peer, Pillow reference): chroma-qp-offset=-6 at crf 28
            // (tune animation leaves x264's -2) bought more browser-side SSIM per byte than a lower crf, but
            // cost pixel art SSIMULACRA2; `--x264-params` tries such settings.
            // asm: no AVX-512, whose MB-tree code made outputs depend on earlier work (see `X264CPU`).
            var x264Params = "keyint=600:keyint-min=60"
            switch timing {
            case .variable: x264Params += ":bframes=0"
            case .constant: break
            case .averaged:
                // x264 follows the timestamps (its rate control weighs each frame by how long it shows);
                // the average frame goes into the H.264 timing info afterwards (`H264TimingInfo`).
                break
            }
            if let asm = try X264CPU.asmWithoutAVX512() { x264Params += ":asm=" + asm }
            if let extra = options.x264Params { x264Params += ":" + extra }
            codecOptions = ["crf": String(options.crf), "preset": options.preset, "profile": "high", "tune": "animation",
                            "x264-params": x264Params]
        case .hevc:
            // x265 refuses a picture under 16 px a side ("Image size is too small"); say so instead of
            // avcodec_open2's "Invalid argument".
            if paddedWidth < 16 || paddedHeight < 16 {
                throw FlipbookError(.unsupported, "HEVC (x265) encodes pictures of 16x16 px or more; this one is "
                                    + "\(paddedWidth)x\(paddedHeight) (H.264 has no such floor)")
            }
            // x265 3.5 (Debian 12) corrupts the heap at 48 px wide or less: its cutree pass writes the
            // propagate costs of at least four 8x8 low-resolution blocks a row with SIMD into a scratch row
            // Lookahead::create sized for the blocks there are (3 or fewer at that width). valgrind: "invalid
            // write of size 8, 0 bytes after a block of size 12" under Lookahead::cuTree, with ffmpeg's own
            // libx265 encoder too; glibc then aborts ("free(): invalid next size"), and a --jobs batch with
            // it. cutree only redistributes bits between frames, so it goes off for those widths alone.
            var x265Params = "log-level=none:bframes=0"
            if paddedWidth <= 48 { x265Params += ":cutree=0" }
            codecOptions = ["crf": String(options.crf), "preset": options.preset, "x265-params": x265Params]
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

        stream = try muxer.addStream(for: codec, timeBase: AVRational(num: 1, den: Int32(1000 * timing.unitsPerMs.units)))
        if case .averaged = timing, let rate = timing.frameRate { try Self.setTimingInfo(stream, frameRate: rate) }
        if options.codec == .hevc, options.container == .mp4 { stream.pointee.codecpar.pointee.codec_tag = fb_tag_hvc1() }
        self.loopCount = loopCount
        if let loopCount { _ = av.av_dict_set(&muxer.pointer.pointee.metadata, "loop_count", String(loopCount), 0) }
        // The index goes to the front in `finish` (MP4FastStart), not by +faststart, whose second pass logs on
        // the host's standard error.
        try muxer.writeHeader(options: options.container == .mp4 ? ["movflags": "+use_metadata_tags"] : [:])
        meter = measure ? try QualityMeter(stream: stream, width: paddedWidth, height: paddedHeight) : nil

        // Chroma is each 2x2 block's mean (area, without full-chroma input), which is what a player that
        // upsamples 4:2:0 from block centres needs. The earlier bicubic filter over full-resolution chroma
        // (SWS_FULL_CHR_H_INP) smeared colour across edges: on video-clip.gif, lossless otherwise, Chromium's
        // own rendering of the video scored U 0.962 against the GIF, ffmpeg's default bicubic 0.976, the area
        // mean 0.981 (bench/chroma_check.py, docs/benchmarks.md).
        scaler = try SwsScaler(sourceWidth: Int32(paddedWidth), sourceHeight: Int32(paddedHeight), sourceFormat: AV_PIX_FMT_RGB24,
                               width: Int32(paddedWidth), height: Int32(paddedHeight), format: AV_PIX_FMT_YUV420P,
                               flags: Int32(SWS_AREA | SWS_ACCURATE_RND),
                               failure: FlipbookError(.codec, "cannot create the RGB to YUV converter"))
        frame = try Frame()
        frame.pointer.pointee.width = Int32(paddedWidth)
        frame.pointer.pointee.height = Int32(paddedHeight)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try LibAV.check(av.av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        packet = try Packet()
        held = try Packet()
    }

    /// Sets (or, with nil, removes) the container's loop_count tag. MP4 writes its tags with the index, at
    /// `finish`, so a count learnt after the header (a GIF's loop extension after its first frame) still
    /// lands in the file; WebM wrote its tags with the header.
    package func setLoopCount(_ loopCount: Int?) throws {
        let av = try LibAV.api()
        _ = av.av_dict_set(&muxer.pointer.pointee.metadata, "loop_count", loopCount.map { String($0) }, 0)
        self.loopCount = loopCount
    }

    /// Writes `frameRate` into the timing info of the stream's SPS (its extradata, from which the muxer
    /// writes `avcC`), as `SampleTiming.averaged` needs.
    private static func setTimingInfo(_ stream: UnsafeMutablePointer<AVStream>, frameRate: (num: Int, den: Int)) throws {
        let av = try LibAV.api()
        let par = stream.pointee.codecpar!
        guard let data = par.pointee.extradata, par.pointee.extradata_size > 0 else {
            throw FlipbookError(.codec, "x264 gave no stream headers to set the frame rate in")
        }
        // A frame lasts 2 * num_units_in_tick / time_scale seconds (H.264 counts fields).
        let common = gcd(frameRate.den, 2 * frameRate.num)
        guard let rewritten = H264TimingInfo.rewrite(Array(UnsafeBufferPointer(start: data, count: Int(par.pointee.extradata_size))),
                                                     numUnitsInTick: UInt32(frameRate.den / common),
                                                     timeScale: UInt32(2 * frameRate.num / common)) else {
            throw FlipbookError(.codec, "x264's sequence parameter set has no timing info to set the frame rate in")
        }
        let padding = 64  // AV_INPUT_BUFFER_PADDING_SIZE: zero bytes readers may read past the end
        guard let buffer = av.av_malloc(rewritten.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw FlipbookError(.codec, "av_malloc failed")
        }
        buffer.initialize(from: rewritten, count: rewritten.count)
        (buffer + rewritten.count).initialize(repeating: 0, count: padding)
        av.av_free(data)
        par.pointee.extradata = buffer
        par.pointee.extradata_size = Int32(rewritten.count)
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    /// Encoder threads for a frame size: one below 50,000 pixels (thread start-up outweighs the work), two
    /// above, as ffmpeg's own x264 uses both cores of a 2-core machine: sample_big.gif (1000x175, 259 frames)
    /// took 2.5 s with one and 1.6 s with two, at the same bytes. Depends only on the size, so the bytes
    /// written never depend on the machine or on `--jobs`.
    package static func threads(width: Int, height: Int) -> Int { width * height < 50_000 ? 1 : 2 }

    /// Zero bytes after the last row: libswscale's SIMD input code reads up to 16 bytes past the end of a
    /// row (valgrind: invalid reads past an exact-size buffer), and libav expects padded input.
    package static let inputSlack = 64

    /// RGBA (width x height) composited onto the background, padded to even size by repeating the last
    /// column and row, followed by `inputSlack` zero bytes. 4:2:0 keeps one colour per 2x2 block, so an odd
    /// size's last column and row share their colour with the padding: padded with the background, they took
    /// half of it (a red edge came out (167, 44, 31) over white), and SSIMULACRA2, which weighs the worst areas
    /// most, marked the whole frame down for that one line (pillow's iss634.gif, 245x245: 59.5 over the whole
    /// frame, 75.4 without its last column and row, the peer's 75.3).
    /// One pass over the output (each byte written once, no zero fill first): perf put the former three
    /// passes (zero, background, pixels) at 7% of sample_big.gif's conversion.
    package func flatten(_ rgba: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let count = paddedWidth * paddedHeight * 3 + Self.inputSlack
        let (width, height, paddedWidth, paddedHeight) = (width, height, paddedWidth, paddedHeight)
        let background = background
        let (br, bg, bb) = (Int(background.0), Int(background.1), Int(background.2))
        precondition(rgba.count >= width * height * 4, "flatten: fewer pixels than the frame's size")
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let dst = out.baseAddress!
            func fill(_ at: UnsafeMutablePointer<UInt8>, pixels: Int) {
                var d = at
                for _ in 0..<pixels {
                    d[0] = background.0; d[1] = background.1; d[2] = background.2
                    d += 3
                }
            }
            for y in 0..<height {
                var d = dst + y * paddedWidth * 3
                if let base = rgba.baseAddress {
                    var s = base + y * width * 4
                    var opaque = true  // most rows of most GIFs: a plain copy the compiler can vectorise
                    for x in 0..<width where s[x * 4 + 3] != 255 { opaque = false; break }
                    if opaque {
                        for x in 0..<width {
                            d[x * 3] = s[x * 4]; d[x * 3 + 1] = s[x * 4 + 1]; d[x * 3 + 2] = s[x * 4 + 2]
                        }
                        if paddedWidth > width { Self.repeatLast(d + width * 3) }
                        continue
                    }
                    for _ in 0..<width {
                        let a = Int(s[3])
                        if a == 255 {
                            d[0] = s[0]; d[1] = s[1]; d[2] = s[2]
                        } else if a == 0 {
                            d[0] = background.0; d[1] = background.1; d[2] = background.2
                        } else {  // only after downscaling: blend
                            d[0] = UInt8((Int(s[0]) * a + br * (255 - a) + 127) / 255)
                            d[1] = UInt8((Int(s[1]) * a + bg * (255 - a) + 127) / 255)
                            d[2] = UInt8((Int(s[2]) * a + bb * (255 - a) + 127) / 255)
                        }
                        s += 4
                        d += 3
                    }
                    if paddedWidth > width { Self.repeatLast(d) }
                } else {
                    fill(d, pixels: paddedWidth)
                }
            }
            if paddedHeight > height {  // the last row again
                (dst + height * paddedWidth * 3).initialize(from: dst + (height - 1) * paddedWidth * 3, count: paddedWidth * 3)
            }
            (dst + paddedWidth * paddedHeight * 3).initialize(repeating: 0, count: Self.inputSlack)
            initialized = count
        }
    }

    /// Copies the RGB pixel before `at` to `at`: a row's padding column.
    @inline(__always) private static func repeatLast(_ at: UnsafeMutablePointer<UInt8>) {
        at[0] = at[-3]; at[1] = at[-2]; at[2] = at[-1]
    }

    package static func crop(_ rgb: [UInt8], paddedWidth: Int, to size: Size) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(size.width * size.height * 3)
        for y in 0..<size.height { out.append(contentsOf: rgb[(y * paddedWidth * 3)..<(y * paddedWidth * 3 + size.width * 3)]) }
        return out
    }

    /// Converts and encodes one frame shown from `pts` for `duration` milliseconds. At a constant rate both
    /// are multiples of its frame (`SampleTiming`).
    package func encode(_ rgb: [UInt8], pts ptsMs: Int, duration durationMs: Int) throws {
        guard let pts = timing.units(ptsMs) else {
            throw FlipbookError(.invalidArgument, "a frame at \(ptsMs) ms is off the encoder's \(timing) timing")
        }
        let (units, ms) = timing.unitsPerMs
        let duration = (durationMs * units + ms / 2) / ms
        let av = try LibAV.api()
        try LibAV.check(av.av_frame_make_writable(frame.pointer), "av_frame_make_writable")
        try rgb.withUnsafeBufferPointer { src in
            try scaler.scale(packed: src.baseAddress!, rowBytes: paddedWidth * 3, height: paddedHeight, into: frame.pointer)
        }
        try rgb.withUnsafeBufferPointer { try meter?.keep($0.baseAddress!, pts: Int64(pts), durationMs: max(1, durationMs)) }
        try send(pts: Int64(pts), duration: Int64(max(1, duration)))
    }

    /// Sends the picture in `frame` to the encoder at `pts` (time-base units) and writes what it has ready.
    private func send(pts: Int64, duration: Int64) throws {
        let av = try LibAV.api()
        frame.pointer.pointee.pts = pts
        durations[pts] = duration
        try LibAV.check(av.avcodec_send_frame(codec.pointer, frame.pointer), "encoding a frame")
        framesSent += 1
        lastPts = pts
        try drain()
    }

    /// Writes every packet the encoder has ready, holding back the newest one: the MP4 muxer takes the
    /// media's end from the last packet (its dts plus its duration), which must reach the GIF's end, and
    /// that is only known in `finish`.
    private func drain() throws {
        let av = try LibAV.api()
        while true {
            let status = av.avcodec_receive_packet(codec.pointer, packet.pointer)
            if status == LibAV.eagain || status == LibAV.eof { return }
            try LibAV.check(status, "encoding")
            let p = packet.pointer
            p.pointee.duration = durations.removeValue(forKey: p.pointee.pts) ?? 0
            if firstDts == nil { firstDts = p.pointee.dts == LibAV.noPTS ? p.pointee.pts : p.pointee.dts }
            if firstPacket {
                firstPacket = false
                if isH264 { try X264InfoSEI.strip(p) }
            }
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
    /// `endMs` is when the last frame stops being shown: the file's duration. With `averaged` timing the
    /// last picture is first sent again as the samples that repeat it (`SampleTiming.averaged`).
    package func finish(endMs: Int) throws -> [UInt8] {
        let av = try LibAV.api()
        if case .averaged(let totalMs, let frames, let samples) = timing {
            guard endMs == totalMs, let total = timing.units(totalMs), framesSent == frames else {
                throw FlipbookError(.invalidArgument, "\(framesSent) frames ending at \(endMs) ms do not make the \(timing) timing")
            }
            let average = Int64(total / samples)
            guard Int64(total) - Int64(samples - frames) * average > lastPts else {
                throw FlipbookError(.invalidArgument, "the last frame starts after the \(timing) timing's repeats of it")
            }
            // `frame` still holds the last picture: x264 copied it, and nothing wrote to it since.
            for k in stride(from: samples - frames, through: 1, by: -1) {
                try send(pts: Int64(total) - Int64(k) * average, duration: average)
            }
        }
        try LibAV.check(av.avcodec_send_frame(codec.pointer, nil), "flushing the encoder")
        try drain()
        if hasHeld {
            // The last packet decoded must carry the media to the GIF's end: from its decode time. Without
            // B-frames that is its own display time; with them it is a frame shown earlier, and the longer
            // duration also pushes the edit list past the end, which MP4Duration puts back. At a constant
            // rate every packet lasts one frame, as the stream's headers say: its media ends at the GIF's.
            // With `averaged` timing the decode times are the presentation times shifted by x264's delay
            // (the first packet's negative dts): the media ends at the GIF's end shifted alike.
            let p = held.pointer
            let dts = p.pointee.dts == LibAV.noPTS ? p.pointee.pts : p.pointee.dts
            switch timing {
            case .variable: p.pointee.duration = max(1, p.pointee.duration, Int64(endMs) - dts)
            case .constant: p.pointee.duration = max(1, p.pointee.duration)
            case .averaged: p.pointee.duration = max(1, Int64(timing.units(endMs) ?? 0) + min(0, firstDts ?? 0) - dts)
            }
            try write(p)
            hasHeld = false
        }
        try meter?.decode(nil)
        var bytes = try muxer.finish()
        if container == .mp4 {
            MP4Duration.set(&bytes, milliseconds: endMs)
            if let indexFirst = MP4FastStart.moveIndexToFront(bytes) { bytes = indexFirst }
        }
        return bytes
    }
}
