import CFFmpeg

/// Measures an encode while it runs: every packet the encoder writes is also decoded (libavcodec's own
/// decoder for the codec), and each decoded picture is compared with the RGB frame the encoder was given for
/// the same timestamp, the way an independent check compares a video with its source (ffmpeg's `ssim`
/// filter after `format=yuv420p` on both sides, as Tests/oracle/anim_reference.py does): the decoded
/// picture goes to RGB and back to YUV 4:2:0 with libswscale's default bicubic filter, the source RGB to YUV
/// 4:2:0 with the same filter, and the planes are scored by SSIM weighted by their sizes (Y 4, U 1, V 1,
/// ffmpeg's "All"). The file's score is the mean over frames weighted by how long each is shown.
///
/// This is the converter's own control signal (`CRFSearch`), not a judgement of the result against what a
/// browser shows: the tests and benchmarks measure that with independent decoders.
///
/// Memory: the source pictures wait here until the decoder returns them, which is the encoder's delay
/// (lookahead plus B-frames). At most `budgetBytes` of them are kept; pictures that arrive while the budget
/// is spent are encoded but not measured, which depends only on the encoder's (deterministic) output order.
package final class QualityMeter {
    package static let budgetBytes = 64 << 20

    private let decoder: CodecContext
    private let picture: Frame
    private let yuv: Frame
    private let toYUV: SwsScaler
    private let toRGB: SwsScaler
    private var rgb: [UInt8]
    private let width: Int, height: Int
    private var sources: [Int64: (planes: [UInt8], durationMs: Int)] = [:]
    private var heldBytes = 0
    private var weightedSum = 0.0
    private var weight = 0.0
    /// Frames compared so far.
    package private(set) var measuredFrames = 0

    /// A decoder for the stream `stream` (whose parameters, with the encoder's extradata, the muxer holds).
    package init(stream: UnsafeMutablePointer<AVStream>, width: Int, height: Int) throws {
        let av = try LibAV.api()
        decoder = try CodecContext.decoder(for: stream.pointee.codecpar.pointee.codec_id)
        try LibAV.check(av.avcodec_parameters_to_context(decoder.pointer, stream.pointee.codecpar), "avcodec_parameters_to_context")
        decoder.pointer.pointee.thread_count = 1
        decoder.pointer.pointee.time_base = AVRational(num: 1, den: 1000)
        try decoder.open()
        picture = try Frame()
        self.width = width
        self.height = height
        yuv = try Frame()
        yuv.pointer.pointee.width = Int32(width)
        yuv.pointer.pointee.height = Int32(height)
        yuv.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try LibAV.check(av.av_frame_get_buffer(yuv.pointer, 0), "av_frame_get_buffer")
        let (w, h) = (Int32(width), Int32(height))
        let failure = FlipbookError(.codec, "cannot create the quality check's converters")
        toYUV = try SwsScaler(sourceWidth: w, sourceHeight: h, sourceFormat: AV_PIX_FMT_RGB24, width: w, height: h,
                              format: AV_PIX_FMT_YUV420P, flags: Int32(SWS_BICUBIC), failure: failure)
        toRGB = try SwsScaler(sourceWidth: w, sourceHeight: h, sourceFormat: AV_PIX_FMT_YUV420P, width: w, height: h,
                              format: AV_PIX_FMT_RGB24, flags: Int32(SWS_BICUBIC), failure: failure)
        rgb = [UInt8](repeating: 0, count: width * height * 3 + FrameEncoder.inputSlack)
    }

    /// The SSIM so far (1 before any frame was measured).
    package var ssim: Double { weight > 0 ? weightedSum / weight : 1 }

    /// Keeps the encoder's input frame (packed RGB, `width` x `height`, followed by
    /// `FrameEncoder.inputSlack` bytes), as the reference's YUV 4:2:0, shown at `pts` for `durationMs`.
    package func keep(_ source: UnsafePointer<UInt8>, pts: Int64, durationMs: Int) throws {
        let size = width * height + 2 * ((width / 2) * (height / 2))
        guard heldBytes + size <= Self.budgetBytes else { return }
        try toYUV.scale(packed: source, rowBytes: width * 3, height: height, into: yuv.pointer)
        var planes = [UInt8](repeating: 0, count: size)
        planes.withUnsafeMutableBufferPointer { out in
            var offset = 0
            for (plane, w, h) in [(0, width, height), (1, width / 2, height / 2), (2, width / 2, height / 2)] {
                let (data, stride) = Self.plane(yuv.pointer, plane)
                for y in 0..<h { (out.baseAddress! + offset + y * w).update(from: data + y * stride, count: w) }
                offset += w * h
            }
        }
        sources[pts] = (planes, durationMs)
        heldBytes += size
    }

    /// Decodes `packet` (nil: the end) and scores every picture the decoder returns.
    package func decode(_ packet: UnsafeMutablePointer<AVPacket>?) throws {
        let av = try LibAV.api()
        try LibAV.check(av.avcodec_send_packet(decoder.pointer, packet), "decoding for the quality check")
        while true {
            let status = av.avcodec_receive_frame(decoder.pointer, picture.pointer)
            if status == LibAV.eagain || status == LibAV.eof { return }
            try LibAV.check(status, "decoding for the quality check")
            defer { av.av_frame_unref(picture.pointer) }
            let pts = picture.pointer.pointee.pts == LibAV.noPTS ? picture.pointer.pointee.best_effort_timestamp : picture.pointer.pointee.pts
            guard let source = sources.removeValue(forKey: pts) else { continue }
            heldBytes -= source.planes.count
            try rgb.withUnsafeMutableBufferPointer { out in
                try toRGB.scale(picture.pointer, sourceHeight: height, into: out.baseAddress!, rowBytes: width * 3, expectedRows: height)
                try toYUV.scale(packed: out.baseAddress!, rowBytes: width * 3, height: height, into: yuv.pointer)
            }
            let score = compare(source.planes)
            weightedSum += score * Double(source.durationMs)
            weight += Double(source.durationMs)
            measuredFrames += 1
        }
    }

    private func compare(_ planes: [UInt8]) -> Double {
        planes.withUnsafeBufferPointer { src in
            var offset = 0, sum = 0.0
            for (plane, w, h, weight) in [(0, width, height, 4.0), (1, width / 2, height / 2, 1.0), (2, width / 2, height / 2, 1.0)] {
                let (data, stride) = Self.plane(yuv.pointer, plane)
                sum += weight * PlaneSSIM.score(src.baseAddress! + offset, strideA: w, UnsafePointer(data), strideB: stride, width: w, height: h)
                offset += w * h
            }
            return sum / 6
        }
    }

    private static func plane(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> (UnsafeMutablePointer<UInt8>, Int) {
        let (data, lines) = SwsScaler.planes(of: frame)
        return (data[index]!, Int(lines[index]))
    }
}
