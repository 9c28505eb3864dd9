import CPNG

/// PNG through libpng, row by row: each decoded row is added into a box-filter accumulator of
/// `width / factor` pixels and every `factor` rows become one output row, so memory follows the shrunk
/// image (one source row plus one accumulator row), not the source. Rows come from the `ByteSource` as
/// libpng asks for them: a file is never read whole. Adam7-interlaced PNGs need every pass before any
/// row is final, so they are decoded whole, under the pixel limit.
package enum PNGStreamDecoder {
    package struct Decoded {
        package var image: Image
        package var fullSize: Size
        /// The box factor applied while decoding (1: full size).
        package var factor: Int
        package var interlaced: Bool
        package var profile: [UInt8]?
    }

    /// The libpng read struct and its info struct: one owner, destroyed together in `deinit`.
    private final class Reader {
        package var png: png_structp?
        package var info: png_infop?
        package var errorBuffer = [CChar](repeating: 0, count: 256)
        package let source: any ByteSource
        package var offset: Int
        package var truncated = false
        /// What the source threw (an object that changed, a connection that broke), which libpng, unable to
        /// throw through its C frames, took for the end of the data: rethrown as it is, never as "truncated".
        package var readError: (any Error)?

        package init(source: any ByteSource) throws {
            self.source = source
            offset = 0
            png = errorBuffer.withUnsafeMutableBufferPointer { fb_png_create_read($0.baseAddress) }
            guard let png else { throw FlipbookError(.codec, "libpng could not be initialised") }
            info = png_create_info_struct(png)
            guard info != nil else { throw FlipbookError(.codec, "libpng could not be initialised") }
        }

        deinit { png_destroy_read_struct(&png, &info, nil) }

        package var message: String {
            String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// A libpng status (0 or -1 from the shim) to `throws`.
        package func check(_ status: Int32, _ what: String) throws {
            guard status != 0 else { return }
            if let readError { throw readError }
            // libpng's complaint then is about the zeros the short read gave it ("IDAT: CRC error"), which read
            // as if the file were damaged rather than cut: not repeated.
            if truncated { throw FlipbookError(.truncated, "PNG data ends early", context: what) }
            throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: message, context: what)
        }
    }

    /// libpng's read callback. It must not jump out through Swift frames, so a short read only zero-fills
    /// and marks the reader truncated; libpng then fails on the bad data from its own (C) frames.
    private static let readCallback: png_rw_ptr = { png, data, length in
        guard let png, let data, let io = png_get_io_ptr(png) else { return }
        let reader = Unmanaged<Reader>.fromOpaque(io).takeUnretainedValue()
        let buffer = UnsafeMutableRawBufferPointer(start: data, count: length)
        var n = 0
        do {
            n = try reader.source.read(into: buffer, at: reader.offset)
        } catch {
            if reader.readError == nil { reader.readError = error }
        }
        if n < length {
            reader.truncated = true
            buffer.baseAddress!.advanced(by: n).initializeMemory(as: UInt8.self, repeating: 0, count: length - n)
        }
        reader.offset += length
    }

    /// The box factor for a source of `full` pixels planned at `scale`: the largest whole factor that
    /// still leaves at least two for the final Lanczos resample (libvips's shrink-on-load rule).
    package static func factor(scale: Double) -> Int {
        guard scale < 0.5 else { return 1 }
        return min(256, max(1, Int((0.5 / scale).rounded(.down))))
    }

    /// Decodes `source` shrunk by `scale` (see `factor`). Checks the pixel limit on the source only when it
    /// must be decoded whole (Adam7); streamed sources are bounded by `maxScaledPixels`.
    package static func decode(_ source: some ByteSource, scale: Double, limits: Limits) throws -> Decoded {
        let reader = try Reader(source: source)
        let png = reader.png!, info = reader.info!
        let io = Unmanaged.passUnretained(reader).toOpaque()
        return try withExtendedLifetime(reader) {
            png_set_read_fn(png, io, readCallback)
            png_set_user_limits(png, 0x7fff_ffff, 0x7fff_ffff)
            try reader.check(fb_png_read_info(png, info), "png_read_info")
            let w = Int(png_get_image_width(png, info)), h = Int(png_get_image_height(png, info))
            let interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE
            var profile: [UInt8]?
            var name: png_charp?, compression: Int32 = 0, data: png_bytep?, length: png_uint_32 = 0
            if png_get_iCCP(png, info, &name, &compression, &data, &length) != 0, let data, length > 0 {
                profile = Array(UnsafeBufferPointer(start: data, count: Int(length)))
            }
            // The ISA-L fast path takes what needs no libpng transformation: 8-bit RGB/RGBA without tRNS.
            let colorType = png_get_color_type(png, info)
            let plain = png_get_bit_depth(png, info) == 8 && !interlaced && png_get_valid(png, info, PNG_INFO_tRNS) == 0
                && (colorType == 2 || colorType == 6)  // PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA
            let idatOffset = reader.offset
            try reader.check(fb_png_set_rgb8(png, info), "png_set_expand")
            if interlaced { _ = try reader.check(fb_png_set_interlace_handling(png) < 0 ? -1 : 0, "png_set_interlace_handling") }
            try reader.check(fb_png_read_update_info(png, info), "png_read_update_info")
            let channels = Int(png_get_channels(png, info))
            guard channels == 3 || channels == 4, png_get_rowbytes(png, info) == w * channels else {
                throw FlipbookError(.unsupported, "PNG layout libpng could not expand to 8-bit RGB(A)")
            }
            let full = Size(width: w, height: h)

            if interlaced {
                try limits.checkPixels(width: w, height: h, what: "Adam7-interlaced PNG (decoded whole, not scaled)")
                var pixels = [UInt8](repeating: 0, count: w * h * channels)
                try pixels.withUnsafeMutableBufferPointer { buffer in
                    var rows = (0..<h).map { Optional(buffer.baseAddress! + $0 * w * channels) }
                    try rows.withUnsafeMutableBufferPointer { try reader.check(fb_png_read_image(png, $0.baseAddress), "png_read_image") }
                }
                // Shrink by whole factors before the Lanczos, as for streamed files (the full image is freed here).
                let k = factor(scale: scale)
                let image = k > 1
                    ? pixels.withUnsafeBufferPointer {
                        BoxShrink.plane($0.baseAddress!, stride: w * channels, width: w, height: h, channels: channels, factor: k)
                    }
                    : Image(width: w, height: h, channels: channels, pixels: pixels)
                return Decoded(image: image, fullSize: full, factor: k, interlaced: true, profile: profile)
            }

            try limits.checkPixels(width: w, height: h, limit: limits.maxScaledPixels, what: "PNG (streamed)")
            let k = factor(scale: scale)
            let outW = (w + k - 1) / k, outH = (h + k - 1) / k
            try limits.checkPixels(width: outW, height: outH, what: "shrunk PNG")
            // png_read_info stops after the first IDAT chunk's length and type: its payload starts here.
            if plain, let head = try? source.bytes(at: idatOffset - 8, length: 8), head.count == 8,
               Array(head[4..<8]) == Array("IDAT".utf8) {
                let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
                let inflater = IDATInflater(source: source, offset: idatOffset, length: length)
                let image = try PNGBandPipeline.decode(inflater, width: w, height: h, channels: channels, factor: k)
                return Decoded(image: image, fullSize: full, factor: k, interlaced: false, profile: profile)
            }
            var out = [UInt8](repeating: 0, count: outW * outH * channels)
            var row = [UInt8](repeating: 0, count: w * channels)
            var sums = [UInt32](repeating: 0, count: outW * channels)
            try row.withUnsafeMutableBufferPointer { line in
                try sums.withUnsafeMutableBufferPointer { acc in
                    try out.withUnsafeMutableBufferPointer { dst in
                        var rowsInBand = 0, outRow = 0
                        for y in 0..<h {
                            if y & 255 == 0 { try Cancellation.check("PNG decoding") }  // a 1,000 MP PNG streams for seconds
                            try reader.check(fb_png_read_row(png, line.baseAddress), "png_read_row")
                            accumulate(line, into: acc, width: w, channels: channels, factor: k)
                            rowsInBand += 1
                            if rowsInBand == k || y == h - 1 {
                                emit(acc, into: dst.baseAddress! + outRow * outW * channels, width: w, outWidth: outW,
                                     channels: channels, factor: k, rows: rowsInBand)
                                acc.update(repeating: 0)
                                rowsInBand = 0
                                outRow += 1
                            }
                        }
                    }
                }
            }
            return Decoded(image: Image(width: outW, height: outH, channels: channels, pixels: out), fullSize: full,
                           factor: k, interlaced: false, profile: profile)
        }
    }

    /// Adds one source row into the accumulator; RGBA colour is weighted by alpha (premultiplied sums),
    /// so transparent pixels do not darken the average. Sums fit UInt32 up to factor 256.
    @inline(__always)
    package static func accumulate(_ line: UnsafeMutableBufferPointer<UInt8>, into acc: UnsafeMutableBufferPointer<UInt32>,
                                   width: Int, channels: Int, factor k: Int) {
        // Block by block: no division per pixel.
        var x = 0, o = 0
        if channels == 3 {
            while x < width {
                let end = min(width, x + k)
                var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0
                while x < end {
                    r &+= UInt32(line[3 * x]); g &+= UInt32(line[3 * x + 1]); b &+= UInt32(line[3 * x + 2])
                    x += 1
                }
                acc[o] &+= r; acc[o + 1] &+= g; acc[o + 2] &+= b
                o += 3
            }
        } else {
            while x < width {
                let end = min(width, x + k)
                var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0, a: UInt32 = 0
                while x < end {
                    let alpha = UInt32(line[4 * x + 3])
                    r &+= UInt32(line[4 * x]) &* alpha; g &+= UInt32(line[4 * x + 1]) &* alpha
                    b &+= UInt32(line[4 * x + 2]) &* alpha; a &+= alpha
                    x += 1
                }
                acc[o] &+= r; acc[o + 1] &+= g; acc[o + 2] &+= b; acc[o + 3] &+= a
                o += 4
            }
        }
    }

    package static func emit(_ acc: UnsafeMutableBufferPointer<UInt32>, into dst: UnsafeMutablePointer<UInt8>, width: Int,
                             outWidth: Int, channels: Int, factor k: Int, rows: Int) {
        for ox in 0..<outWidth {
            let columns = min(k, width - ox * k)
            let n = UInt32(columns * rows)
            let o = ox * channels
            if channels == 3 {
                for c in 0..<3 { dst[o + c] = UInt8((acc[o + c] + n / 2) / n) }
            } else {
                let a = acc[o + 3]
                for c in 0..<3 { dst[o + c] = a == 0 ? 0 : UInt8(min(255, (acc[o + c] + a / 2) / a)) }
                dst[o + 3] = UInt8((a + n / 2) / n)
            }
        }
    }
}
