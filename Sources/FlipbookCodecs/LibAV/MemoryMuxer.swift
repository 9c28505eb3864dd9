#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg

/// A libavformat muxer that writes into memory (a `MemoryOutput`); the only owner of its context, which
/// it frees in deinit. Streams use a millisecond time base unless told otherwise.
package final class MemoryMuxer {
    package let pointer: UnsafeMutablePointer<AVFormatContext>
    private let output = MemoryOutput()

    /// A muxer for libavformat's short format name ("mp4", "webm", "webp").
    package init(formatName: String) throws {
        let av = try LibAV.api()
        var context: UnsafeMutablePointer<AVFormatContext>?
        try LibAV.check(av.avformat_alloc_output_context2(&context, nil, formatName, nil), "creating the \(formatName) muxer")
        guard let context else { throw FlipbookError(.codec, "no \(formatName) muxer in this libavformat") }
        pointer = context
    }

    /// True if the container wants codec headers once, in the stream parameters (AV_CODEC_FLAG_GLOBAL_HEADER).
    package var wantsGlobalHeader: Bool { pointer.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// A stream carrying `codec`'s output, in `timeBase` (default milliseconds; the MP4 muxer doubles a
    /// track's timescale until it is at least 10,000). Call after the codec is opened.
    package func addStream(for codec: CodecContext, timeBase: AVRational = AVRational(num: 1, den: 1000)) throws
        -> UnsafeMutablePointer<AVStream>
    {
        let av = try LibAV.api()
        guard let stream = av.avformat_new_stream(pointer, nil) else { throw FlipbookError(.codec, "avformat_new_stream failed") }
        try LibAV.check(av.avcodec_parameters_from_context(stream.pointee.codecpar, codec.pointer), "codec parameters")
        stream.pointee.time_base = timeBase
        return stream
    }

    /// Points the muxer at memory and writes the container header with `options` (muxer AVOptions).
    package func writeHeader(options: [String: String] = [:]) throws {
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
    package func write(_ packet: UnsafeMutablePointer<AVPacket>, from timeBase: AVRational, to stream: UnsafeMutablePointer<AVStream>) throws {
        let av = try LibAV.api()
        av.av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
        packet.pointee.stream_index = stream.pointee.index
        try LibAV.check(av.av_interleaved_write_frame(pointer, packet), "writing a packet")
    }

    /// Writes the trailer and returns the file's bytes.
    package func finish() throws -> [UInt8] {
        try LibAV.check(try LibAV.api().av_write_trailer(pointer), "finishing the container")
        return output.bytes
    }

    deinit {
        guard let av = try? LibAV.api() else { return }
        pointer.pointee.pb = nil  // the MemoryOutput owns and frees it, after this
        av.avformat_free_context(pointer)
    }
}
