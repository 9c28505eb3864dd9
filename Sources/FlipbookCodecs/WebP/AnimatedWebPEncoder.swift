import CFFmpeg

/// Animated WebP through libavcodec's `libwebp_anim` encoder (libwebp's WebPAnimEncoder, which stores
/// only the changed rectangle of each frame and merges identical frames) and libavformat's `webp`
/// muxer, written to memory. Frames arrive as RGB images with their start in ms; the file loops forever.
///
/// libavcodec 5.1 never tells libwebp when the last frame ends (it assembles without the final
/// timestamp), so libwebp gives the last frame the average duration of the others. `finish` therefore
/// rewrites the last ANMF chunk's 24-bit duration so the frames add up to exactly `endMs`.
package final class AnimatedWebPEncoder {
    package let width: Int, height: Int
    private let codec: CodecContext
    private let muxer: MemoryMuxer
    private let stream: UnsafeMutablePointer<AVStream>
    private let frame: Frame
    private let packet: Packet
    private var lastMs = -1

    package init(width: Int, height: Int, options: WebPPreviewOptions) throws {
        try options.validate()
        guard width <= 16383, height <= 16383 else {
            throw FlipbookError(.invalidArgument, "WebP pictures are at most 16383 pixels a side, not \(width)x\(height)")
        }
        let av = try LibAV.api()
        self.width = width
        self.height = height
        guard let encoder = av.avcodec_find_encoder_by_name("libwebp_anim") else {
            throw FlipbookError(.unsupported, "this libavcodec has no libwebp_anim encoder (animated WebP)")
        }
        codec = try CodecContext(codec: encoder)
        let ctx = codec.pointer
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        // RGB in: libwebp converts to YUV itself, so odd sizes need no padding and swscale is not involved.
        ctx.pointee.pix_fmt = fb_pix_fmt_rgb32()
        ctx.pointee.time_base = AVRational(num: 1, den: 1000)  // the encoder passes pts straight on as ms
        try codec.open(options: ["quality": String(options.quality), "lossless": "0"])
        muxer = try MemoryMuxer(formatName: "webp")
        stream = try muxer.addStream(for: codec)
        try muxer.writeHeader(options: ["loop": "0"])  // 0: forever
        frame = try Frame()
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        frame.pointer.pointee.format = ctx.pointee.pix_fmt.rawValue
        try LibAV.check(av.av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        packet = try Packet()
    }

    /// Adds a frame shown from `ms` (strictly after the previous frame's start).
    package func add(_ image: Image, atMs ms: Int) throws {
        guard image.width == width, image.height == height else {
            throw FlipbookError(.codec, "frame size changed from \(width)x\(height) to \(image.width)x\(image.height)")
        }
        guard ms > lastMs else { throw FlipbookError(.invalidArgument, "WebP frame times must increase (\(ms) ms after \(lastMs) ms)") }
        let av = try LibAV.api()
        try LibAV.check(av.av_frame_make_writable(frame.pointer), "av_frame_make_writable")
        let stride = Int(frame.pointer.pointee.linesize.0)
        let base = UnsafeMutableRawPointer(frame.pointer.pointee.data.0!)
        let channels = image.channels
        image.pixels.withUnsafeBufferPointer { src in
            for y in 0..<height {
                let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let s = (y * width + x) * channels
                    let alpha: UInt32 = channels == 4 ? UInt32(src[s + 3]) : 255
                    row[x] = alpha << 24 | UInt32(src[s]) << 16 | UInt32(src[s + 1]) << 8 | UInt32(src[s + 2])
                }
            }
        }
        frame.pointer.pointee.pts = Int64(ms)
        lastMs = ms
        try LibAV.check(av.avcodec_send_frame(codec.pointer, frame.pointer), "encoding a WebP frame")
        try drain()
    }

    /// Writes the packets the encoder has ready. libwebp_anim returns an empty packet per frame and the
    /// whole animation as one packet when flushed; only packets with data go to the muxer.
    private func drain() throws {
        let av = try LibAV.api()
        while true {
            let status = av.avcodec_receive_packet(codec.pointer, packet.pointer)
            if status == LibAV.eagain || status == LibAV.eof { return }
            try LibAV.check(status, "encoding WebP")
            defer { av.av_packet_unref(packet.pointer) }
            if packet.pointer.pointee.size > 0 { try muxer.write(packet.pointer, from: codec.pointer.pointee.time_base, to: stream) }
        }
    }

    /// Flushes the encoder, finishes the file with the last frame lasting until `endMs`, and returns the
    /// file and the number of frames in it.
    package func finish(endMs: Int) throws -> (data: [UInt8], frames: Int) {
        let av = try LibAV.api()
        try LibAV.check(av.avcodec_send_frame(codec.pointer, nil), "flushing the WebP encoder")
        try drain()
        var data = try muxer.finish()
        let frames = try WebPAnimation.setLastFrameEnd(&data, endMs: endMs)
        return (data, frames)
    }
}
