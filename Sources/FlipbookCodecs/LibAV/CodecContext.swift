import CFFmpeg

/// Owns an `AVCodecContext` (decoder or encoder); `deinit` is the only place it is freed.
package final class CodecContext {
    package private(set) var pointer: UnsafeMutablePointer<AVCodecContext>

    package init(codec: UnsafePointer<AVCodec>) throws {
        let av = try LibAV.api()
        guard let ctx = av.avcodec_alloc_context3(codec) else {
            throw FlipbookError(.codec, "avcodec_alloc_context3 failed")
        }
        pointer = ctx
    }

    /// A decoder for `id`; throws `.unsupported` if this libavcodec has none.
    package static func decoder(for id: AVCodecID) throws -> CodecContext {
        let av = try LibAV.api()
        guard let codec = av.avcodec_find_decoder(id) else {
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
