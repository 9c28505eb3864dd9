import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

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

    /// Checks the stream header's coded size against `input.limits.videoFramePixelLimit` before the decoder
    /// opens (and gives the decoder the same `max_pixels`). `forwardPass`: the caller decodes long runs of
    /// consecutive frames (storyboards), so frame threading pays; otherwise one thread (see below).
    /// `threads`: the frame threads of a forward pass as the caller chose them (nil: `frameThreads`).
    init(_ input: MediaInput, request: ThumbnailRequest, forwardPass: Bool = false, threads: Int? = nil) throws {
        let av = try LibAV.api()
        // MP4/MOV/Matroska headers carry the size and pixel format; probing (decoding ahead) is only
        // needed when they do not, and would read much more of the file than one poster needs.
        format = try FormatInput(source: input.source, probeStreams: false)
        var index = try FormatInput.videoStream(format)
        let known = format.streams[index].pointee.codecpar.pointee
        if known.width <= 0 || known.height <= 0 {
            try format.probeStreams()
            index = try FormatInput.videoStream(format)
        }
        streamIndex = index
        stream = format.streams[index]
        let par = stream.pointee.codecpar!
        let limit = input.limits.videoFramePixelLimit
        guard Int(par.pointee.width) * Int(par.pointee.height) <= limit else {
            throw FlipbookError(.limitExceeded, "video frames are \(par.pointee.width)x\(par.pointee.height), over the pixel limit")
        }
        codec = try CodecContext.decoder(for: par.pointee.codec_id)
        try LibAV.check(av.avcodec_parameters_to_context(codec.pointer, par), "codec parameters")
        // One thread: frame threading would decode (and hold) a frame per thread before returning the
        // first, and posters and storyboards need the first frame after a keyframe.
        codec.pointer.pointee.thread_count = 1
        if forwardPass {
            codec.pointer.pointee.thread_count = threads.map { Int32($0) }
                ?? Self.frameThreads(width: Int(par.pointee.width), height: Int(par.pointee.height))
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

    /// Frame threads for a forward pass: each extra thread holds one more decoded frame in flight, so as many
    /// as the cores allow (at most 4) while the extra frames stay within 64 MB: 4K gets up to 3, 1080p up to
    /// 4, 8K none. Measured on the corpus's 8-frame 8K HEVC clip (`storyboard --count 10`): libavcodec holds
    /// three 8K frames with their motion tables (~70 MB each) and ~10 MB of tables per thread, and the process
    /// peaks at ~274 MB with one thread and ~314 MB with two, over the 300 MB a single file may take.
    static func frameThreads(width: Int, height: Int) -> Int32 {
        let frameBytes = max(1, width * height * 3)  // up to 4:2:0 at 16 bits per sample
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return Int32(max(1, min(4, cores, 1 + (64 << 20) / frameBytes)))
    }

    /// A reader for work that spans the whole video (previews, storyboards): `input` must be a video of
    /// known duration, decoded within its limits, rendered to `maxPixelSize`.
    static func spanning(_ input: MediaInput, maxPixelSize: Int, for what: String, forwardPass: Bool = false, threads: Int? = nil) throws -> VideoReader {
        guard input.type.isVideo else {
            // "previews are made from videos, not unknown" read oddly for bytes no format claims.
            if input.type == .unknown { throw FlipbookError(.unknownFormat, "\(what) are made from videos; these bytes are no format Flipbook knows") }
            throw FlipbookError(.unsupported, "\(what) are made from videos, not \(input.type)")
        }
        let reader = try VideoReader(input, request: ThumbnailRequest(maxPixelSize: maxPixelSize), forwardPass: forwardPass, threads: threads)
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

    /// The next decoded frame in display order; nil at the end of the stream. Damaged packets and frames
    /// are skipped. The reader's own frame is returned, not a pointer into it: holding it keeps its memory
    /// alive, but its contents are replaced by the next call (`av_frame_ref` what must outlive that).
    func nextFrame() throws -> Frame? {
        try Cancellation.check("video decoding")  // posters, storyboards, previews and bundles all decode here
        let av = try LibAV.api()
        av.av_frame_unref(frame.pointer)
        while true {
            let received = av.avcodec_receive_frame(codec.pointer, frame.pointer)
            if received >= 0 {
                framesDecoded += 1
                return frame
            }
            if sawEnd { return nil }  // drained
            try Cancellation.check("video decoding")  // also per packet: a run of damaged packets returns no frame
            let status = av.av_read_frame(format.pointer, packet.pointer)
            if status < 0 {
                try format.rethrowReadError()  // the source failed: not the end of the stream
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
    /// it, for reordering. nil if the first packet there is not a keyframe or does not decode. The reader's
    /// own frame is returned (replaced by the next call); the decoder is left drained, so seek before
    /// decoding further (`decode(from:)` does).
    func keyframe(at seconds: Double) throws -> Frame? {
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
            return frame
        }
        try format.rethrowReadError()
        return nil
    }

    /// Seeks to the keyframe at or before `seconds` and calls `visit` with each decoded frame, in order,
    /// until it returns true or the stream ends. The pointer is valid only during the call.
    func decode(from seconds: Double, _ visit: (UnsafeMutablePointer<AVFrame>) throws -> Bool) throws {
        try seek(to: seconds)
        while let decoded = try nextFrame() {
            if try visit(decoded.pointer) { return }
        }
    }
}
