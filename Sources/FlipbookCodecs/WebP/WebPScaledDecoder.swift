import CWebP

/// Still WebP through libwebp's own decoder with scaling (`WebPDecoderConfig.options.use_scaling`): the
/// decoder's rescaler shrinks each row as it is decoded, so only the scaled image is ever allocated. A
/// 16000x9000 WebP (576 MB as RGBA) thumbnails with a few MB of pixels. The pixel limit then applies to
/// the decoded (scaled) size; `Limits.maxScaledPixels` bounds the source, which sets the decoding time.
package enum WebPScaledDecoder {
    /// The decoded image, the full source size it shows, and whether libwebp scaled while decoding.
    package struct Decoded {
        package var image: Image
        package var fullSize: Size
        package var scaled: Bool
    }

    /// Decodes `bytes` scaled by `scale` (1 or less; 1 decodes at full size). Costs one allocation of the
    /// decoded size, plus libwebp's row buffers (a few rows of the source width).
    package static func decode(_ bytes: UnsafeRawBufferPointer, scale: Double, limits: Limits) throws -> Decoded {
        var config = WebPDecoderConfig()
        guard fb_webp_init_config(&config) != 0 else {
            throw FlipbookError(.libraryUnavailable, "libwebp's decoder does not match the headers it was built with")
        }
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let status = fb_webp_get_features(base, bytes.count, &config.input)
        guard status == VP8_STATUS_OK else { throw error(status, "reading the WebP header") }
        let w = Int(config.input.width), h = Int(config.input.height)
        let outW = scale < 1 ? max(1, Int((Double(w) * scale).rounded())) : w
        let outH = scale < 1 ? max(1, Int((Double(h) * scale).rounded())) : h
        let scaled = outW != w || outH != h
        if scaled {
            try limits.checkPixels(width: w, height: h, limit: limits.maxScaledPixels, what: "WebP (decoded scaled)")
            try limits.checkPixels(width: outW, height: outH, what: "scaled WebP")
        } else {
            try limits.checkPixels(width: w, height: h, what: "WebP")
        }
        let alpha = config.input.has_alpha != 0
        let channels = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: outW * outH * channels)
        // libwebp's second thread filters while the first decodes, as vips asks for too: 1.27 -> 1.11 s on the
        // 144 MP WebP on a quiet 2-core machine (hyperfine; vips 1.14 s). Under load the thread costs instead.
        config.options.use_threads = 1
        if scaled {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(outW)
            config.options.scaled_height = Int32(outH)
        }
        config.output.colorspace = alpha ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        let result = pixels.withUnsafeMutableBufferPointer { buffer -> VP8StatusCode in
            config.output.u.RGBA.rgba = buffer.baseAddress
            config.output.u.RGBA.stride = Int32(outW * channels)
            config.output.u.RGBA.size = buffer.count
            defer { WebPFreeDecBuffer(&config.output) }  // frees nothing of ours (external memory), only its own state
            return WebPDecode(base, bytes.count, &config)
        }
        guard result == VP8_STATUS_OK else { throw error(result, "decoding WebP") }
        return Decoded(image: Image(width: outW, height: outH, channels: channels, pixels: pixels),
                       fullSize: Size(width: w, height: h), scaled: scaled)
    }

    private static func error(_ status: VP8StatusCode, _ what: String) -> FlipbookError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: FlipbookError(.truncated, "WebP data ends early", context: what)
        case VP8_STATUS_UNSUPPORTED_FEATURE: FlipbookError(.unsupported, "WebP uses a feature libwebp does not decode", context: what)
        case VP8_STATUS_OUT_OF_MEMORY: FlipbookError(.limitExceeded, "libwebp ran out of memory", context: what)
        // libwebp's other statuses, by name rather than number (VP8StatusCode).
        case VP8_STATUS_BITSTREAM_ERROR: FlipbookError(.corrupt, "WebP data is not decodable", underlying: "bitstream error", context: what)
        case VP8_STATUS_INVALID_PARAM: FlipbookError(.corrupt, "WebP data is not decodable", underlying: "invalid parameter", context: what)
        default: FlipbookError(.corrupt, "WebP data is not decodable (libwebp status \(status.rawValue))", context: what)
        }
    }
}
