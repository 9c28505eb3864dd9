import CWebP

/// A still WebP through libwebp's encoder, called directly with the settings libavcodec's `libwebp` encoder
/// gives it (`WebPConfigInit`, lossy at `quality`, method 4, the picture as ARGB for libwebp to convert), so
/// the file is byte for byte the one libavcodec wrote before, without loading libavcodec and its ~130
/// shared objects (28 MB resident) into a process that only makes still thumbnails.
/// Cost: libwebp's ARGB copy of the picture (4 bytes a pixel) plus its encoder's working memory.
package enum WebPStillEncoder {
    /// `image` (RGB or RGBA) as a lossy WebP file at `quality` (clamped to 0-100).
    package static func encode(_ image: Image, quality: Int) throws -> [UInt8] {
        guard image.width <= Int(WEBP_MAX_DIMENSION), image.height <= Int(WEBP_MAX_DIMENSION) else {
            throw FlipbookError(.invalidArgument, "WebP pictures are at most 16383 pixels a side, not \(image.width)x\(image.height)")
        }
        var config = WebPConfig()
        guard fb_webp_config_init(&config) != 0 else {
            throw FlipbookError(.libraryUnavailable, "libwebp's encoder does not match the headers it was built with")
        }
        config.lossless = 0
        config.quality = Float(min(100, max(0, quality)))
        config.method = 4
        guard WebPValidateConfig(&config) != 0 else { throw FlipbookError(.codec, "libwebp refused its own configuration") }
        var picture = WebPPicture()
        guard fb_webp_picture_init(&picture) != 0 else {
            throw FlipbookError(.libraryUnavailable, "libwebp's encoder does not match the headers it was built with")
        }
        defer { WebPPictureFree(&picture) }
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        picture.use_argb = 1
        let imported = image.pixels.withUnsafeBufferPointer { p in
            image.channels == 4 ? WebPPictureImportRGBA(&picture, p.baseAddress, Int32(image.width * 4))
                : WebPPictureImportRGB(&picture, p.baseAddress, Int32(image.width * 3))
        }
        guard imported != 0 else { throw FlipbookError(.limitExceeded, "libwebp ran out of memory for a \(image.width)x\(image.height) picture") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        picture.writer = WebPMemoryWrite
        let ok = withUnsafeMutablePointer(to: &writer) { w in
            picture.custom_ptr = UnsafeMutableRawPointer(w)
            return WebPEncode(&config, &picture)
        }
        guard ok != 0, let mem = writer.mem, writer.size > 0 else {
            throw FlipbookError(.codec, "libwebp could not encode the picture (error \(picture.error_code.rawValue))")
        }
        return Array(UnsafeBufferPointer(start: mem, count: writer.size))
    }
}
