import CFFmpeg

/// Owns an `AVCodecContext` (decoder or encoder); `deinit` is the only place it is freed.
package final class CodecContext {
    package private(set) var pointer: UnsafeMutablePointer<AVCodecContext>

    package init(codec: UnsafePointer<AVCodec>) throws {
        let av = try LibAV.api()
        guard let ctx = av.avcodec_alloc_context3(codec) else {
            throw FlipbookError(.codec, "avcodec_alloc_context3 failed")
        }
        // Its messages (x264's statistics at INFO after every encode, a decoder's complaints about a damaged
        // packet) three levels quieter: ERROR becomes VERBOSE, INFO becomes TRACE. A host at libav's default
        // level sees none of them, one at DEBUG sees the errors and warnings; libav's process-wide level is
        // the host's to set (`LibAVLog`), never ours.
        ctx.pointee.log_level_offset = Self.logLevelOffset
        pointer = ctx
    }

    /// AV_LOG_VERBOSE - AV_LOG_ERROR: added to the level of every message logged for our contexts.
    package static let logLevelOffset: Int32 = 24

    /// A decoder for `id`; throws `.unsupported` if this libavcodec has none.
    package static func decoder(for id: AVCodecID) throws -> CodecContext {
        let av = try LibAV.api()
        guard let codec = av.avcodec_find_decoder(id) else {
            // AV_CODEC_ID_NONE: the container names no codec libav knows (damaged sample descriptions),
            // which read "no decoder for none".
            if id == AV_CODEC_ID_NONE { throw FlipbookError(.corrupt, "the stream names no codec libav knows") }
            throw FlipbookError(.unsupported, "no decoder for \(LibAV.codecName(id))")
        }
        return try CodecContext(codec: codec)
    }

    package func open(options: [String: String] = [:]) throws {
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
