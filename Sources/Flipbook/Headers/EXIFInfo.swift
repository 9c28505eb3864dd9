/// What Flipbook reads from EXIF / TIFF metadata. Parsing is bounds-checked throughout: malformed
/// metadata yields nil fields, never a crash.
public struct EXIFInfo: Equatable, Sendable {
    /// Tag 274 as stored, if present.
    public var orientation: Int?
    /// The embedded JPEG thumbnail (IFD1), as a byte range of the TIFF block.
    public var thumbnail: Range<Int>?
    /// ImageWidth / ImageLength of IFD0 (present in TIFF files, rarely in EXIF).
    public var width: Int?
    public var height: Int?

    /// Parses a TIFF structure ("II*\0" or "MM\0*" header).
    public init?(tiff bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return nil }

        /// Reads a SHORT or LONG scalar entry's value.
        func value(entry e: Int) -> Int? {
            guard let type = u16(e + 2) else { return nil }
            switch type {
            case 3: return u16(e + 8)
            case 4: return u32(e + 8)
            default: return nil
            }
        }
        /// Calls `body(tag, entryOffset)` for each entry; returns the next IFD's offset.
        func walk(_ ifd: Int, _ body: (Int, Int) -> Void) -> Int? {
            guard let n = u16(ifd), n <= 1000 else { return nil }
            for i in 0..<n {
                let e = ifd + 2 + i * 12
                guard let tag = u16(e) else { return nil }
                body(tag, e)
            }
            return u32(ifd + 2 + n * 12)
        }

        let next = walk(ifd0) { tag, e in
            switch tag {
            case 0x0112: orientation = value(entry: e)
            case 0x0100: width = value(entry: e)
            case 0x0101: height = value(entry: e)
            default: break
            }
        }
        if let ifd1 = next, ifd1 > 8, ifd1 < bytes.count {
            var offset: Int?, length: Int?
            _ = walk(ifd1) { tag, e in
                if tag == 0x0201 { offset = value(entry: e) }
                if tag == 0x0202 { length = value(entry: e) }
            }
            if let offset, let length, length > 0, offset > 0, offset + length <= bytes.count {
                thumbnail = offset..<(offset + length)
            }
        }
    }
}

/// The JPEG markers Flipbook cares about, found by walking the segments before the first scan.
struct JPEGMarkers {
    /// The TIFF block inside the APP1 "Exif\0\0" segment, as a byte range of the file.
    var exif: Range<Int>?
    /// An APP14 "Adobe" segment is present: CMYK data is stored inverted (Photoshop's convention).
    var adobe = false
    /// From the first SOFn segment: size, sample precision, component count and the SOF type (0xC0...).
    var width: Int?
    var height: Int?
    var precision: Int?
    var components: Int?
    var frameType: UInt8?

    init(_ bytes: UnsafeRawBufferPointer) {
        var i = 2
        var segments = 0
        while i + 4 <= bytes.count, segments < 256 {
            guard bytes[i] == 0xFF else { i += 1; continue }  // tolerate junk between segments
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill bytes
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2 else { break }
            let payload = (i + 4)..<min(bytes.count, i + 2 + length)
            if marker == 0xE1, exif == nil, payload.count > 6,
               Array(bytes[payload.lowerBound..<payload.lowerBound + 6]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
                exif = (payload.lowerBound + 6)..<payload.upperBound
            }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker), frameType == nil, payload.count >= 6 {
                frameType = marker
                precision = Int(bytes[payload.lowerBound])
                height = Int(bytes[payload.lowerBound + 1]) << 8 | Int(bytes[payload.lowerBound + 2])
                width = Int(bytes[payload.lowerBound + 3]) << 8 | Int(bytes[payload.lowerBound + 4])
                components = Int(bytes[payload.lowerBound + 5])
            }
            if marker == 0xEE, payload.count >= 5,
               Array(bytes[payload.lowerBound..<payload.lowerBound + 5]) == Array("Adobe".utf8) {
                adobe = true
            }
            i += 2 + length
            segments += 1
        }
    }
}
