import CFFmpeg

/// Owning wrappers for libav objects: each `deinit` is the only place its object is freed.

final class CodecContext {
    private(set) var pointer: UnsafeMutablePointer<AVCodecContext>

    init(codec: UnsafePointer<AVCodec>) throws {
        let av = try LibAV.api()
        guard let ctx = av.avcodec_alloc_context3(codec) else {
            throw FlipbookError(.codec, "avcodec_alloc_context3 failed")
        }
        pointer = ctx
    }

    /// A decoder for `id`; throws `.unsupported` if this libavcodec has none.
    static func decoder(for id: AVCodecID) throws -> CodecContext {
        let av = try LibAV.api()
        guard let codec = av.avcodec_find_decoder(id) else {
            throw FlipbookError(.unsupported, "no decoder for \(LibAV.codecName(id))")
        }
        return try CodecContext(codec: codec)
    }

    func open(options: [String: String] = [:]) throws {
        let av = try LibAV.api()
        var dict: OpaquePointer?
        for (key, value) in options { _ = av.av_dict_set(&dict, key, value, 0) }
        defer { av.av_dict_free(&dict) }
        try LibAV.check(av.avcodec_open2(pointer, nil, &dict), "avcodec_open2")
    }

    deinit {
        if let av = try? LibAV.api() {
            var ctx: UnsafeMutablePointer<AVCodecContext>? = pointer
            av.avcodec_free_context(&ctx)
        }
    }
}

final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>
    init() throws {
        guard let frame = try LibAV.api().av_frame_alloc() else { throw FlipbookError(.codec, "av_frame_alloc failed") }
        pointer = frame
    }
    deinit {
        if let av = try? LibAV.api() {
            var frame: UnsafeMutablePointer<AVFrame>? = pointer
            av.av_frame_free(&frame)
        }
    }
}

final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>
    init() throws {
        guard let packet = try LibAV.api().av_packet_alloc() else { throw FlipbookError(.codec, "av_packet_alloc failed") }
        pointer = packet
    }
    /// A packet holding a copy of `bytes`, followed by the zero padding decoders require.
    convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init()
        try LibAV.check(try LibAV.api().av_new_packet(pointer, Int32(bytes.count)), "av_new_packet")
        if let src = bytes.baseAddress, bytes.count > 0 { pointer.pointee.data.update(from: src.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
    }
    deinit {
        if let av = try? LibAV.api() {
            var packet: UnsafeMutablePointer<AVPacket>? = pointer
            av.av_packet_free(&packet)
        }
    }
}

/// A demuxer reading from a `ByteSource` through `AVIOBridge`: nothing touches the file system.
final class FormatInput {
    let io: AVIOBridge
    private(set) var pointer: UnsafeMutablePointer<AVFormatContext>

    /// Opens the container. `probeStreams: false` skips avformat_find_stream_info, which decodes ahead to
    /// learn what the headers do not say; call `probeStreams()` when a stream's parameters are missing.
    init(source: any ByteSource, probeStreams: Bool = true) throws {
        let av = try LibAV.api()
        io = try AVIOBridge(source: source)
        guard let ctx = av.avformat_alloc_context() else { throw FlipbookError(.codec, "avformat_alloc_context failed") }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        // On failure avformat_open_input has already freed the context (and, with CUSTOM_IO, not our pb).
        try LibAV.check(av.avformat_open_input(&opened, nil, nil, nil), "avformat_open_input", code: .corrupt)
        pointer = opened!
        if probeStreams { try self.probeStreams() }
    }

    func probeStreams() throws {
        try LibAV.check(try LibAV.api().avformat_find_stream_info(pointer, nil), "avformat_find_stream_info", code: .corrupt)
    }

    var streams: [UnsafeMutablePointer<AVStream>] {
        (0..<Int(pointer.pointee.nb_streams)).compactMap { pointer.pointee.streams[$0] }
    }

    deinit {
        if let av = try? LibAV.api() {
            var ctx: UnsafeMutablePointer<AVFormatContext>? = pointer
            av.avformat_close_input(&ctx)  // leaves pb alone (CUSTOM_IO); `io` is released after this
        }
    }
}

/// libswscale between libav frames and packed (single-plane) buffers, with the plane-pointer plumbing
/// written once.
enum SwsScale {
    /// The frame's eight plane pointers and line sizes, as sws_scale takes them.
    static func planes(of frame: UnsafeMutablePointer<AVFrame>) -> (data: [UnsafeMutablePointer<UInt8>?], lines: [Int32]) {
        let data = withUnsafeMutablePointer(to: &frame.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        let lines = withUnsafePointer(to: &frame.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        return (data, lines)
    }

    /// Converts all `sourceHeight` rows of `frame` into the packed `destination`; throws unless the
    /// scaler produced `expectedRows` rows.
    static func frame(_ frame: UnsafeMutablePointer<AVFrame>, sourceHeight: Int, into destination: UnsafeMutablePointer<UInt8>,
                      rowBytes: Int, expectedRows: Int, with sws: OpaquePointer) throws {
        let av = try LibAV.api()
        let (data, lines) = planes(of: frame)
        let source = data.map { UnsafePointer($0) }
        var planes: [UnsafeMutablePointer<UInt8>?] = [destination, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(sws, source, lines, 0, Int32(sourceHeight), &planes, &strides) == expectedRows else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }

    /// Converts the packed `source` (`height` rows of `rowBytes`) into `frame`'s planes.
    static func packed(_ source: UnsafePointer<UInt8>, rowBytes: Int, height: Int, into frame: UnsafeMutablePointer<AVFrame>,
                       with sws: OpaquePointer) throws {
        let av = try LibAV.api()
        let (data, lines) = planes(of: frame)
        var planes: [UnsafePointer<UInt8>?] = [source, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(sws, &planes, &strides, 0, Int32(height), data, lines) == height else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }
}
