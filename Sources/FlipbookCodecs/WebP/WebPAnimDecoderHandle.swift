import CWebP

/// libwebp's WebPAnimDecoder: it applies each frame's blend and dispose and hands back the whole canvas.
/// Freed in `deinit` only.
package final class WebPAnimDecoderHandle {
    package let pointer: OpaquePointer
    private let bytes: WebPBytes

    package init(_ bytes: WebPBytes) throws {
        var options = WebPAnimDecoderOptions()
        guard fb_webp_anim_options_init(&options) != 0 else {
            throw FlipbookError(.libraryUnavailable, "libwebpdemux does not match the headers it was built with")
        }
        options.color_mode = MODE_RGBA  // straight (not premultiplied) alpha, as every other canvas here
        options.use_threads = 0  // one conversion per core already fills the machine
        guard let decoder = fb_webp_anim_decoder_new(bytes.bytes, bytes.count, &options) else {
            throw FlipbookError(.corrupt, "animated WebP cannot be decoded", context: "WebPAnimDecoderNew")
        }
        pointer = decoder
        self.bytes = bytes
    }

    deinit { WebPAnimDecoderDelete(pointer) }

    package var hasMoreFrames: Bool { WebPAnimDecoderHasMoreFrames(pointer) != 0 }

    /// The next composited canvas (owned by the decoder, valid until the next call), or nil on a
    /// decoding error.
    package func next() -> UnsafePointer<UInt8>? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(pointer, &buffer, &timestamp) != 0, let buffer else { return nil }
        return UnsafePointer(buffer)
    }
}
