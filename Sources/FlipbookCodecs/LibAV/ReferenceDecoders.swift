import CFFmpeg

/// Other libraries' decoders, driven from this process, for benchmarks and cross-checks. Not a pipeline.
package enum ReferenceDecoders {
    /// Decodes every frame of a GIF with libavformat's GIF demuxer and libavcodec's GIF decoder (which
    /// composites frames itself), reading through the same byte-source bridge Flipbook uses.
    /// Returns the frame count and the pixels composited (frames x canvas).
    package static func libavcodecGIF(source: any ByteSource) throws -> (frames: Int, pixels: Int) {
        let av = try LibAV.api()
        let input = try FormatInput(source: source)
        let index = av.av_find_best_stream(input.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        try LibAV.check(index, "finding the GIF stream")
        let codec = try CodecContext.decoder(for: AV_CODEC_ID_GIF)
        try LibAV.check(av.avcodec_parameters_to_context(codec.pointer, input.streams[Int(index)].pointee.codecpar), "codec parameters")
        codec.pointer.pointee.thread_count = 1
        try codec.open()
        let packet = try Packet(), frame = try Frame()
        var frames = 0, pixels = 0
        func drain() throws {
            while true {
                let status = av.avcodec_receive_frame(codec.pointer, frame.pointer)
                if status == LibAV.eagain || status == LibAV.eof { return }
                try LibAV.check(status, "decoding GIF")
                frames += 1
                pixels += Int(frame.pointer.pointee.width) * Int(frame.pointer.pointee.height)
                av.av_frame_unref(frame.pointer)
            }
        }
        while av.av_read_frame(input.pointer, packet.pointer) >= 0 {
            if packet.pointer.pointee.stream_index == index {
                _ = av.avcodec_send_packet(codec.pointer, packet.pointer)
                try drain()
            }
            av.av_packet_unref(packet.pointer)
        }
        _ = av.avcodec_send_packet(codec.pointer, nil)
        try drain()
        return (frames, pixels)
    }
}
