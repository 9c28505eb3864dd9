import CJPEG

/// JPEG through libjpeg-turbo's libjpeg API, streamed: the file comes from its `ByteSource` in 64 KiB reads
/// as libjpeg asks for them, so a thumbnail's memory follows the DCT-scaled image, not the file (TurboJPEG
/// takes the whole file in one buffer: 17.7 MB for a 24 MP CMYK JPEG). Decoding settings are TurboJPEG's
/// defaults (accurate integer IDCT, fancy upsampling), so pixels are the same as before.
package final class JPEGStreamDecoder {
    package struct Header {
        package var width: Int
        package var height: Int
        package var colorSpace: J_COLOR_SPACE
        package var isCMYK: Bool { colorSpace == JCS_CMYK || colorSpace == JCS_YCCK }
    }

    private let raw: UnsafeMutablePointer<fb_jpeg_reader>
    private let source: any ByteSource
    /// Set by the read callback, which cannot throw through libjpeg's C frames.
    private var readError: Error?

    /// libjpeg's read callback: copies from the source at the offset the C source manager keeps.
    private static let readCallback: fb_jpeg_read_fn = { context, buffer, length, offset in
        guard let context, let buffer else { return 0 }
        let decoder = Unmanaged<JPEGStreamDecoder>.fromOpaque(context).takeUnretainedValue()
        do {
            return try decoder.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length), at: Int(offset))
        } catch {
            decoder.readError = error
            return 0
        }
    }

    package init(source: some ByteSource, bufferSize: Int = 64 << 10) throws {
        self.source = source
        // The context is set once `self` exists; nothing reads before `readHeader`.
        guard let reader = fb_jpeg_create(Self.readCallback, nil, bufferSize) else {
            throw FlipbookError(.codec, "libjpeg could not be initialised")
        }
        raw = reader
        raw.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { fb_jpeg_destroy(raw) }

    private var message: String { String(cString: withUnsafeBytes(of: &raw.pointee.message) { $0.baseAddress!.assumingMemoryBound(to: CChar.self) }) }

    /// libjpeg's first warning (data it recovered from), if any.
    package var warning: String? {
        guard raw.pointee.warnings > 0 else { return nil }
        return String(cString: withUnsafeBytes(of: &raw.pointee.warning) { $0.baseAddress!.assumingMemoryBound(to: CChar.self) })
    }

    private func check(_ status: Int32, _ what: String, _ description: String) throws {
        if let readError { throw readError }
        guard status != 0 else { return }
        throw FlipbookError(.corrupt, description, underlying: message, context: what)
    }

    /// The markers up to the first scan.
    package func readHeader() throws -> Header {
        try check(fb_jpeg_read_header(raw), "jpeg_read_header", "not a decodable JPEG header")
        let info = raw.pointee.cinfo
        return Header(width: Int(info.image_width), height: Int(info.image_height), colorSpace: info.jpeg_color_space)
    }

    /// Decodes at `num`/`denom` (one of TurboJPEG's scaling factors) to RGB; CMYK/YCCK through
    /// `cmykProfile` or the default CMYK profile, reading Adobe's inverted convention when `adobe`, converted
    /// band by band on a second thread as libjpeg decodes. The size is the DCT-scaled one, rounded up as
    /// TurboJPEG's is. Returns libjpeg's warning with the image.
    package func decode(_ header: Header, num: Int, denom: Int, adobe: Bool, cmykProfile: [UInt8]?) throws -> (Image, warning: String?) {
        let cmyk = header.isCMYK
        try check(fb_jpeg_start(raw, UInt32(num), UInt32(denom), cmyk ? JCS_CMYK : JCS_RGB), "jpeg_start_decompress",
                  "JPEG data could not be decoded")
        let w = Int(raw.pointee.cinfo.output_width), h = Int(raw.pointee.cinfo.output_height)
        let channels = Int(raw.pointee.cinfo.output_components)
        guard channels == (cmyk ? 4 : 3) else { throw FlipbookError(.unsupported, "JPEG output has \(channels) components") }
        if cmyk {
            let converter = CMYKBandConverter(width: w, height: h, profile: cmykProfile, inverted: adobe)
            try readRows(into: converter.cmyk, width: w, height: h, channels: 4) { converter.convert($0) }
            return (try converter.finish(rows: h), warning)
        }
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        try pixels.withUnsafeMutableBufferPointer { try readRows(into: $0.baseAddress!, width: w, height: h, channels: 3) { _ in } }
        return (Image(width: w, height: h, channels: 3, pixels: pixels), warning)
    }

    /// Reads every scanline into `base` (rows of `width * channels` bytes), 16 at a time, calling `band` with
    /// each range of rows as it completes (rows libjpeg never delivered are reported last, left as they were).
    private func readRows(into base: UnsafeMutablePointer<UInt8>, width w: Int, height h: Int, channels: Int,
                          band: (Range<Int>) -> Void) throws {
        let size = 16
        var rows = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: size)
        var y = 0
        while y < h {
            let n = min(size, h - y)
            for i in 0..<n { rows[i] = base + (y + i) * w * channels }
            let got = rows.withUnsafeMutableBufferPointer { fb_jpeg_read_rows(raw, $0.baseAddress, Int32(n)) }
            try check(got < 0 ? -1 : 0, "jpeg_read_scanlines", "JPEG data could not be decoded")
            guard got > 0 else { break }
            band(y..<(y + Int(got)))
            y += Int(got)
        }
        if y < h { band(y..<h) }
    }
}
