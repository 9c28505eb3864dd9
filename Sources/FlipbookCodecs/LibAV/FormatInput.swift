import CFFmpeg

/// A demuxer reading from a `ByteSource` through `AVIOBridge`: nothing touches the file system.
package final class FormatInput {
    package let io: AVIOBridge
    package private(set) var pointer: UnsafeMutablePointer<AVFormatContext>

    /// Opens the container. `probeStreams: false` skips avformat_find_stream_info, which decodes ahead to
    /// learn what the headers do not say; call `probeStreams()` when a stream's parameters are missing.
    package init(source: any ByteSource, probeStreams: Bool = true) throws {
        let av = try LibAV.api()
        io = try AVIOBridge(source: source)
        guard let ctx = av.avformat_alloc_context() else { throw FlipbookError(.codec, "avformat_alloc_context failed") }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        // On failure avformat_open_input has already freed the context (and, with CUSTOM_IO, not our pb).
        let status = av.avformat_open_input(&opened, nil, nil, nil)
        if status < 0, let failed = io.state.readError { throw failed }
        if status < 0 {
            // Said as what it means for the file, not which call failed ("avformat_open_input failed").
            if status == fb_averror_eof() || (status == fb_averror(EIO) && !io.state.readFailed) {
                // libav's own words for a Matroska cut short are "Input/output error": not repeated.
                throw FlipbookError(.truncated, "the file ends inside its container's headers",
                                    underlying: status == fb_averror_eof() ? LibAV.describe(status) : nil, context: "avformat_open_input")
            }
            throw FlipbookError(.corrupt, "the container's headers cannot be read", underlying: LibAV.describe(status),
                                context: "avformat_open_input")
        }
        pointer = opened!
        if probeStreams { try self.probeStreams() }
    }

    /// The decoders avformat_find_stream_info opens to decode ahead are libav's, not `CodecContext`s, so their
    /// complaints about a damaged stream ("[h264 @ ...] error while decoding MB") reached the log of a host at
    /// libav's default level, where our own decoders' never do. Their one door is the per-stream options,
    /// which avcodec_open2 applies to each: they get `CodecContext`'s level offset through it.
    package func probeStreams() throws {
        let av = try LibAV.api()
        let count = Int(pointer.pointee.nb_streams)
        var options = [OpaquePointer?](repeating: nil, count: count)
        for i in 0..<count { _ = av.av_dict_set(&options[i], "log_level_offset", "\(CodecContext.logLevelOffset)", 0) }
        defer { for i in 0..<count { av.av_dict_free(&options[i]) } }
        let status = options.withUnsafeMutableBufferPointer { av.avformat_find_stream_info(pointer, $0.baseAddress) }
        try rethrowReadError()
        try LibAV.check(status, "avformat_find_stream_info", code: .corrupt)
    }

    /// Throws what the source threw if a read of it failed: libav took it for the end of the data.
    package func rethrowReadError() throws {
        if let failed = io.state.readError { throw failed }
    }

    /// A stream's display matrix (rotation and mirroring side data), nine values; empty if it has none.
    package static func displayMatrix(of stream: UnsafeMutablePointer<AVStream>) -> [Int32] {
        guard let av = try? LibAV.api() else { return [] }
        var size = 0
        guard let data = av.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return [] }
        return data.withMemoryRebound(to: Int32.self, capacity: 9) { Array(UnsafeBufferPointer(start: $0, count: 9)) }
    }

    /// Whether a VP8 or VP9 stream carries alpha beside itself: WebM's AlphaMode, which the Matroska demuxer
    /// gives as the stream tag `alpha_mode` = 1. The alpha travels in BlockAdditional data that libavcodec's
    /// native decoders ignore, so the pixel format says yuv420p while a browser shows the transparency.
    package static func carriesAlphaAlongside(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        guard let av = try? LibAV.api(), let entry = av.av_dict_get(stream.pointee.metadata, "alpha_mode", nil, 0),
              let value = entry.pointee.value else { return false }
        return String(cString: value) == "1"
    }

    /// The default video stream, never an attached picture (cover art).
    package static func videoStream(_ format: FormatInput) throws -> Int {
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

    package var streams: [UnsafeMutablePointer<AVStream>] {
        (0..<Int(pointer.pointee.nb_streams)).compactMap { pointer.pointee.streams[$0] }
    }

    deinit {
        if let av = try? LibAV.api() {
            var ctx: UnsafeMutablePointer<AVFormatContext>? = pointer
            av.avformat_close_input(&ctx)  // leaves pb alone (CUSTOM_IO); `io` is released after this
        }
    }
}
