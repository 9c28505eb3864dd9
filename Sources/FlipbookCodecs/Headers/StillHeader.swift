/// Header facts about a still (or the first frame of an animated image), read without decoding pixels:
/// the size that the limit checks use and that `probe` reports.
package struct StillHeader {
    /// Stored size (before orientation).
    package var width: Int
    package var height: Int
    package var hasAlpha: Bool?
    package var orientation: Orientation = .up
    package var rawOrientation: Int?
    package var frames = 1
    package var loopCount: Int?
    package var durationMs: Int?
    package var codec: String

    package static func read(_ source: some ByteSource, type: MediaType) throws -> StillHeader {
        switch type {
        case .jpeg: return try source.withContiguousBytes { try jpeg($0) }
        case .png, .apng: return try png(source)
        case .webp, .animatedWebP: return try webp(source)
        case .bmp: return try bmp(source)
        case .tiff: return try source.withContiguousBytes { try tiff($0) }
        case .avif, .heic: return try HEIFDecoder.header(source, type: type)
        default: throw FlipbookError(.unsupported, "\(type) is not a still format Flipbook reads")
        }
    }

    package static func jpeg(_ bytes: UnsafeRawBufferPointer) throws -> StillHeader {
        let markers = JPEGMarkers(bytes)
        // Our own SOF reading covers what TurboJPEG refuses (12-bit, lossless, > 65500 px).
        guard let width = markers.width, let height = markers.height else {
            throw FlipbookError(bytes.count < 1024 ? .truncated : .corrupt, "JPEG has no frame header (SOF)")
        }
        var result = StillHeader(width: width, height: height, hasAlpha: false, codec: "mjpeg")
        if let range = markers.exif, let exif = EXIFInfo(tiff: UnsafeRawBufferPointer(rebasing: bytes[range])) {
            result.rawOrientation = exif.orientation
            result.orientation = Orientation(exifValue: exif.orientation)
        }
        return result
    }

    private static func be32(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
    }
    private static func le(_ b: [UInt8], _ o: Int, _ n: Int) -> Int {
        (0..<n).reduce(0) { $0 | Int(b[o + $1]) << (8 * $1) }
    }

    package static func png(_ source: some ByteSource) throws -> StillHeader {
        let ihdr = try source.bytes(at: 8, length: 25)
        guard ihdr.count == 25, String(decoding: ihdr[4..<8], as: UTF8.self) == "IHDR" else {
            throw FlipbookError(source.count < 33 ? .truncated : .corrupt, "PNG has no IHDR chunk")
        }
        let colorType = ihdr[17]
        var result = StillHeader(width: be32(ihdr, 8), height: be32(ihdr, 12), hasAlpha: colorType == 4 || colorType == 6,
                                 codec: "png")
        var offset = 8, chunks = 0, durationMs = 0.0, fctl = 0
        var animated = false
        while offset + 8 <= source.count, chunks < 100_000 {
            let head = try source.bytes(at: offset, length: 8)
            guard head.count == 8 else { break }
            let length = be32(head, 0), type = String(decoding: head[4..<8], as: UTF8.self)
            switch type {
            case "tRNS": result.hasAlpha = true
            case "acTL":
                let body = try source.bytes(at: offset + 8, length: 8)
                if body.count == 8 {
                    animated = true
                    result.frames = be32(body, 0)
                    result.loopCount = be32(body, 4)
                    result.codec = "apng"
                }
            case "fcTL":
                let body = try source.bytes(at: offset + 8, length: 26)
                if body.count == 26 {
                    fctl += 1
                    let num = Double(Int(body[20]) << 8 | Int(body[21]))
                    let den = Double(Int(body[22]) << 8 | Int(body[23]))
                    durationMs += num / (den == 0 ? 100 : den) * 1000
                }
            case "eXIf":
                let body = try source.bytes(at: offset + 8, length: min(length, 65536))
                let exif = body.withUnsafeBytes { EXIFInfo(tiff: $0) }
                result.rawOrientation = exif?.orientation
                result.orientation = Orientation(exifValue: exif?.orientation)
            case "IEND": chunks = .max - 1
            default: break
            }
            offset += 12 + length
            chunks += 1
        }
        if animated, fctl > 0 { result.durationMs = Int(durationMs.rounded()) }
        return result
    }

    package static func webp(_ source: some ByteSource) throws -> StillHeader {
        var offset = 12, chunks = 0
        var result: StillHeader?
        var frames = 0, duration = 0, animated = false, loops: Int?
        var orientation: Int?
        let end = min(source.count, 8 + be32le(try source.bytes(at: 4, length: 4)))
        while offset + 8 <= end, chunks < 100_000 {
            let head = try source.bytes(at: offset, length: 8)
            guard head.count == 8 else { break }
            let fourcc = String(decoding: head[0..<4], as: UTF8.self)
            let length = le(head, 4, 4)
            let body = try source.bytes(at: offset + 8, length: min(length, fourcc == "EXIF" ? 65536 : 30))
            switch fourcc {
            case "VP8X" where body.count >= 10:
                animated = body[0] & 0x02 != 0
                result = StillHeader(width: le(body, 4, 3) + 1, height: le(body, 7, 3) + 1, hasAlpha: body[0] & 0x10 != 0,
                                     codec: "webp")
            case "VP8 " where body.count >= 10 && result == nil:
                guard body[3] == 0x9D, body[4] == 0x01, body[5] == 0x2A else {
                    throw FlipbookError(.corrupt, "WebP VP8 frame has a bad start code")
                }
                result = StillHeader(width: le(body, 6, 2) & 0x3FFF, height: le(body, 8, 2) & 0x3FFF, hasAlpha: false, codec: "webp")
            case "VP8L" where body.count >= 5 && result == nil:
                guard body[0] == 0x2F else { throw FlipbookError(.corrupt, "WebP lossless frame has a bad signature") }
                let bits = le(body, 1, 4)
                result = StillHeader(width: (bits & 0x3FFF) + 1, height: (bits >> 14 & 0x3FFF) + 1,
                                     hasAlpha: bits >> 28 & 1 != 0, codec: "webp")
            case "ANIM" where body.count >= 6:
                loops = le(body, 4, 2)
            case "ANMF" where body.count >= 15:
                frames += 1
                duration += le(body, 12, 3)
            case "EXIF":
                // Some writers keep the "Exif\0\0" prefix of JPEG's APP1.
                let tiff = body.starts(with: Array("Exif".utf8)) ? Array(body.dropFirst(6)) : body
                orientation = tiff.withUnsafeBytes { EXIFInfo(tiff: $0) }?.orientation
            default: break
            }
            offset += 8 + length + (length & 1)
            chunks += 1
        }
        guard var header = result else {
            throw FlipbookError(source.count < 30 ? .truncated : .corrupt, "WebP has no image header")
        }
        if animated {
            header.frames = frames
            header.durationMs = duration
            header.loopCount = loops
        }
        header.rawOrientation = orientation
        header.orientation = Orientation(exifValue: orientation)
        return header
    }

    private static func be32le(_ b: [UInt8]) -> Int { b.count == 4 ? le(b, 0, 4) : 0 }

    package static func bmp(_ source: some ByteSource) throws -> StillHeader {
        let head = try source.bytes(at: 0, length: 32)
        guard head.count >= 26 else { throw FlipbookError(.truncated, "BMP header is cut short") }
        let dib = le(head, 14, 4)
        if dib == 12 {
            return StillHeader(width: le(head, 18, 2), height: le(head, 20, 2), hasAlpha: false, codec: "bmp")
        }
        let width = Int(Int32(truncatingIfNeeded: le(head, 18, 4)))
        let height = Int(Int32(truncatingIfNeeded: le(head, 22, 4)))
        let bits = head.count >= 30 ? le(head, 28, 2) : 0
        return StillHeader(width: abs(width), height: abs(height), hasAlpha: bits == 32 && dib >= 56, codec: "bmp")
    }

    package static func tiff(_ bytes: UnsafeRawBufferPointer) throws -> StillHeader {
        guard let info = EXIFInfo(tiff: bytes), let w = info.width, let h = info.height else {
            throw FlipbookError(.corrupt, "TIFF has no readable first image directory")
        }
        var result = StillHeader(width: w, height: h, hasAlpha: nil, codec: "tiff")
        result.rawOrientation = info.orientation
        result.orientation = Orientation(exifValue: info.orientation)
        return result
    }
}
