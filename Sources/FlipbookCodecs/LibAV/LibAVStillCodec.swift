import CFFmpeg

/// Stills that TurboJPEG does not take (PNG, WebP, BMP, TIFF, 12-bit, lossless JPEG): one packet holding
/// the whole file through a libavcodec image decoder, then libswscale to 8-bit RGB(A) at full size.
package enum LibAVStillCodec {
    package static func codecID(for type: MediaType) -> AVCodecID? {
        switch type {
        case .png, .apng: AV_CODEC_ID_PNG
        case .webp: AV_CODEC_ID_WEBP
        case .bmp: AV_CODEC_ID_BMP
        case .tiff: AV_CODEC_ID_TIFF
        case .jpeg: AV_CODEC_ID_MJPEG
        default: nil
        }
    }

    /// Decodes the first image of `bytes`. The codec's own `max_pixels` guard backs up our header check.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: MediaType, limits: Limits) throws -> Image {
        let av = try LibAV.api()
        guard let id = codecID(for: type) else { throw FlipbookError(.unsupported, "\(type) stills are not supported") }
        let codec = try CodecContext.decoder(for: id)
        codec.pointer.pointee.max_pixels = Int64(limits.maxPixels)
        codec.pointer.pointee.thread_count = 1
        try codec.open()
        let packet = try Packet(copying: bytes)
        let frame = try Frame()
        // Said of the file ("PNG data is not decodable"), libavcodec's words after it, rather than "decoding
        // png failed (Generic error in an external library)".
        func undecodable(_ status: Int32) -> FlipbookError {
            FlipbookError(.corrupt, "\(type.rawValue.uppercased()) data is not decodable", underlying: "libavcodec: " + LibAV.describe(status),
                          context: "decoding \(type)")
        }
        let sent = av.avcodec_send_packet(codec.pointer, packet.pointer)
        if sent < 0 { throw undecodable(sent) }
        _ = av.avcodec_send_packet(codec.pointer, nil)  // flush: image decoders may hold the frame
        let status = av.avcodec_receive_frame(codec.pointer, frame.pointer)
        if status == LibAV.eof || status == LibAV.eagain {
            throw FlipbookError(.corrupt, "\(type) data holds no decodable image")
        }
        if status < 0 { throw undecodable(status) }
        return try toRGB(frame.pointer, limits: limits)
    }

    /// Converts a decoded frame to packed 8-bit RGB, or RGBA when the pixel format carries alpha.
    package static func toRGB(_ frame: UnsafeMutablePointer<AVFrame>, limits: Limits) throws -> Image {
        let av = try LibAV.api()
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        try limits.checkPixels(width: w, height: h)
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        guard let desc = av.av_pix_fmt_desc_get(format) else { throw FlipbookError(.codec, "unknown pixel format") }
        let alpha = desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        let pal = desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL) != 0 && format == AV_PIX_FMT_PAL8
        // PAL8 can carry alpha in its palette (PNG tRNS, GIF); treat it as RGBA.
        let channels = alpha || pal ? 4 : 3
        let target = channels == 4 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        let flags = Int32(SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP)
        let scaler = try SwsScaler(sourceWidth: Int32(w), sourceHeight: Int32(h), sourceFormat: format, width: Int32(w), height: Int32(h),
                                   format: target, flags: flags,
                                   failure: FlipbookError(.unsupported, "cannot convert pixel format \(LibAV.pixelFormatName(format))"))
        var pixels = [UInt8](repeating: 0, count: w * h * channels)
        try pixels.withUnsafeMutableBufferPointer { dst in
            try scaler.scale(frame, sourceHeight: h, into: dst.baseAddress!, rowBytes: w * channels, expectedRows: h)
        }
        return Image(width: w, height: h, channels: channels, pixels: pixels)
    }

    /// Encodes with a libavcodec image encoder: PNG (RGB or RGBA) or WebP (libwebp, lossy at `quality`).
    package static func encode(_ image: Image, format: OutputFormat, quality: Int) throws -> [UInt8] {
        let av = try LibAV.api()
        let codecPointer: UnsafePointer<AVCodec>?
        var source = image
        let pixelFormat: AVPixelFormat
        switch format {
        case .png:
            codecPointer = av.avcodec_find_encoder(AV_CODEC_ID_PNG)
            pixelFormat = image.channels == 4 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        case .webp:
            codecPointer = av.avcodec_find_encoder_by_name("libwebp")
            // libwebp takes BGRA ("RGB32" on little-endian machines).
            source = image.withAlpha()
            source.pixels.withUnsafeMutableBufferPointer { p in
                for i in stride(from: 0, to: p.count, by: 4) { p.swapAt(i, i + 2) }
            }
            pixelFormat = AV_PIX_FMT_BGRA
        case .jpeg:
            return try TurboJPEG.encode(image, quality: quality)
        }
        guard let codecPointer else { throw FlipbookError(.unsupported, "this libavcodec has no \(format) encoder") }
        let codec = try CodecContext(codec: codecPointer)
        let ctx = codec.pointer
        ctx.pointee.width = Int32(source.width)
        ctx.pointee.height = Int32(source.height)
        ctx.pointee.pix_fmt = pixelFormat
        ctx.pointee.time_base = AVRational(num: 1, den: 25)
        var options: [String: String] = [:]
        if format == .webp { options["quality"] = String(min(100, max(0, quality))) }
        if format == .png { options["compression_level"] = "6" }
        try codec.open(options: options)

        let frame = try Frame()
        frame.pointer.pointee.width = Int32(source.width)
        frame.pointer.pointee.height = Int32(source.height)
        frame.pointer.pointee.format = pixelFormat.rawValue
        frame.pointer.pointee.pts = 0
        try LibAV.check(av.av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        let rowBytes = source.width * source.channels
        let lineSize = Int(frame.pointer.pointee.linesize.0)
        source.pixels.withUnsafeBufferPointer { src in
            let dst = frame.pointer.pointee.data.0!
            for y in 0..<source.height {
                (dst + y * lineSize).update(from: src.baseAddress! + y * rowBytes, count: rowBytes)
            }
        }
        try LibAV.check(av.avcodec_send_frame(ctx, frame.pointer), "encoding \(format)")
        try LibAV.check(av.avcodec_send_frame(ctx, nil), "flushing \(format) encoder")
        let packet = try Packet()
        var output: [UInt8] = []
        while true {
            let status = av.avcodec_receive_packet(ctx, packet.pointer)
            if status == LibAV.eof || status == LibAV.eagain { break }
            try LibAV.check(status, "encoding \(format)")
            output.append(contentsOf: UnsafeBufferPointer(start: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size)))
            av.av_packet_unref(packet.pointer)
        }
        guard !output.isEmpty else { throw FlipbookError(.codec, "\(format) encoder produced no data") }
        return output
    }
}
