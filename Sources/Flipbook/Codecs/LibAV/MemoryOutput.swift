#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg

/// A growable in-memory file that libavformat writes through a custom AVIO context, with the seeks the
/// MP4 muxer needs (it rewrites box sizes) and reads for `+faststart`'s second pass, which movenc opens
/// through `AVFormatContext.io_open`: `install(on:)` routes that to a reader over the same bytes, so no
/// temporary file is ever made.
final class MemoryOutput {
    /// The file's bytes.
    private(set) var bytes: [UInt8] = []

    /// Cursor state shared with the C callbacks; one per AVIO context over `bytes`.
    final class Cursor {
        unowned let output: MemoryOutput
        var position = 0
        init(_ output: MemoryOutput) { self.output = output }
    }

    private var contexts: [(UnsafeMutablePointer<AVIOContext>, Unmanaged<Cursor>)] = []

    /// A writable (and readable, seekable) AVIO context over the bytes. Freed by this object.
    func makeContext(writable: Bool) throws -> UnsafeMutablePointer<AVIOContext> {
        let av = try LibAV.api()
        let size = 64 * 1024
        guard let buffer = av.av_malloc(size) else { throw FlipbookError(.codec, "av_malloc failed") }
        let cursor = Unmanaged.passRetained(Cursor(self))
        guard let ctx = av.avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), writable ? 1 : 0,
                                              cursor.toOpaque(), memoryRead, writable ? memoryWrite : nil, memorySeek)
        else {
            av.av_free(buffer)
            cursor.release()
            throw FlipbookError(.codec, "avio_alloc_context failed")
        }
        contexts.append((ctx, cursor))
        return ctx
    }

    /// Frees one context made by `makeContext` (used by io_close2).
    func close(_ ctx: UnsafeMutablePointer<AVIOContext>) {
        guard let i = contexts.firstIndex(where: { $0.0 == ctx }) else { return }
        free(contexts.remove(at: i))
    }

    private func free(_ entry: (UnsafeMutablePointer<AVIOContext>, Unmanaged<Cursor>)) {
        guard let av = try? LibAV.api() else { return }
        var ctx: UnsafeMutablePointer<AVIOContext>? = entry.0
        av.av_freep(&entry.0.pointee.buffer)  // libav may have replaced the buffer: free the current one
        av.avio_context_free(&ctx)
        entry.1.release()
    }

    /// Routes the muxer's second-pass opens (faststart) to readers over these bytes.
    func install(on format: UnsafeMutablePointer<AVFormatContext>) {
        format.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        format.pointee.io_open = memoryIOOpen
        format.pointee.io_close2 = memoryIOClose
    }

    fileprivate func write(_ data: UnsafePointer<UInt8>, count: Int, at position: Int) {
        if position > bytes.count { bytes.append(contentsOf: repeatElement(0, count: position - bytes.count)) }
        let overlap = min(count, bytes.count - position)
        if overlap > 0 {
            bytes.withUnsafeMutableBufferPointer { (($0.baseAddress! + position)).update(from: data, count: overlap) }
        }
        if count > overlap { bytes.append(contentsOf: UnsafeBufferPointer(start: data + overlap, count: count - overlap)) }
    }

    deinit {
        for entry in contexts { free(entry) }
    }
}

private func cursor(_ opaque: UnsafeMutableRawPointer?) -> MemoryOutput.Cursor {
    Unmanaged<MemoryOutput.Cursor>.fromOpaque(opaque!).takeUnretainedValue()
}

private func memoryWrite(_ opaque: UnsafeMutableRawPointer?, _ data: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let data, size >= 0 else { return fb_averror(EINVAL) }
    let c = cursor(opaque)
    c.output.write(data, count: Int(size), at: c.position)
    c.position += Int(size)
    return size
}

private func memoryRead(_ opaque: UnsafeMutableRawPointer?, _ data: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let data, size > 0 else { return fb_averror(EINVAL) }
    let c = cursor(opaque)
    let available = c.output.bytes.count - c.position
    guard available > 0 else { return fb_averror_eof() }
    let n = min(Int(size), available)
    c.output.bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress! + c.position, count: n) }
    c.position += n
    return Int32(n)
}

private func memorySeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    let c = cursor(opaque)
    let mode = whence & ~Int32(0x20000)  // AVSEEK_FORCE
    if mode == fb_avseek_size() { return Int64(c.output.bytes.count) }
    let target: Int64
    switch mode {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = Int64(c.position) + offset
    case SEEK_END: target = Int64(c.output.bytes.count) + offset
    default: return Int64(fb_averror(EINVAL))
    }
    guard target >= 0 else { return Int64(fb_averror(EINVAL)) }
    c.position = Int(target)
    return target
}

private func memoryIOOpen(_ s: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                          _ url: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let s, let pb, let opaque = s.pointee.opaque else { return fb_averror(EINVAL) }
    let output = Unmanaged<MemoryOutput>.fromOpaque(opaque).takeUnretainedValue()
    guard let ctx = try? output.makeContext(writable: flags & AVIO_FLAG_WRITE != 0) else { return fb_averror(ENOMEM) }
    pb.pointee = ctx
    return 0
}

private func memoryIOClose(_ s: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<AVIOContext>?) -> Int32 {
    guard let s, let pb, let opaque = s.pointee.opaque else { return 0 }
    Unmanaged<MemoryOutput>.fromOpaque(opaque).takeUnretainedValue().close(pb)
    return 0
}

/// A libavformat muxer that writes into memory (a `MemoryOutput`); the only owner of its context, which
/// it frees in deinit. Streams use a millisecond time base.
final class MemoryMuxer {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    private let output = MemoryOutput()

    /// A muxer for libavformat's short format name ("mp4", "webm", "webp").
    init(formatName: String) throws {
        let av = try LibAV.api()
        var context: UnsafeMutablePointer<AVFormatContext>?
        try LibAV.check(av.avformat_alloc_output_context2(&context, nil, formatName, nil), "creating the \(formatName) muxer")
        guard let context else { throw FlipbookError(.codec, "no \(formatName) muxer in this libavformat") }
        pointer = context
    }

    /// True if the container wants codec headers once, in the stream parameters (AV_CODEC_FLAG_GLOBAL_HEADER).
    var wantsGlobalHeader: Bool { pointer.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// A stream carrying `codec`'s output, in milliseconds. Call after the codec is opened.
    func addStream(for codec: CodecContext) throws -> UnsafeMutablePointer<AVStream> {
        let av = try LibAV.api()
        guard let stream = av.avformat_new_stream(pointer, nil) else { throw FlipbookError(.codec, "avformat_new_stream failed") }
        try LibAV.check(av.avcodec_parameters_from_context(stream.pointee.codecpar, codec.pointer), "codec parameters")
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        return stream
    }

    /// Points the muxer at memory and writes the container header with `options` (muxer AVOptions).
    func writeHeader(options: [String: String] = [:]) throws {
        let av = try LibAV.api()
        pointer.pointee.pb = try output.makeContext(writable: true)
        pointer.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        output.install(on: pointer)
        var dict: OpaquePointer?
        for (key, value) in options { _ = av.av_dict_set(&dict, key, value, 0) }
        defer { av.av_dict_free(&dict) }
        try LibAV.check(av.avformat_write_header(pointer, &dict), "writing the container header")
    }

    /// Writes one packet whose timestamps are in `timeBase` (rescaled to the stream's).
    func write(_ packet: UnsafeMutablePointer<AVPacket>, from timeBase: AVRational, to stream: UnsafeMutablePointer<AVStream>) throws {
        let av = try LibAV.api()
        av.av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
        packet.pointee.stream_index = stream.pointee.index
        try LibAV.check(av.av_interleaved_write_frame(pointer, packet), "writing a packet")
    }

    /// Writes the trailer and returns the file's bytes.
    func finish() throws -> [UInt8] {
        try LibAV.check(try LibAV.api().av_write_trailer(pointer), "finishing the container")
        return output.bytes
    }

    deinit {
        guard let av = try? LibAV.api() else { return }
        pointer.pointee.pb = nil  // the MemoryOutput owns and frees it, after this
        av.avformat_free_context(pointer)
    }
}
