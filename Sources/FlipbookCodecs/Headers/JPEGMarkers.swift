/// The JPEG markers Flipbook cares about, found by walking the segments before the first scan.
package struct JPEGMarkers {
    /// The TIFF block inside the APP1 "Exif\0\0" segment, as a byte range of the file.
    package var exif: Range<Int>?
    /// An APP14 "Adobe" segment is present: CMYK data is stored inverted (Photoshop's convention).
    package var adobe = false
    /// From the first SOFn segment: size, sample precision, component count and the SOF type (0xC0...).
    package var width: Int?
    package var height: Int?
    package var precision: Int?
    package var components: Int?
    package var frameType: UInt8?
    /// The APP2 "ICC_PROFILE\0" segments' payloads by sequence number, and the chunk count they declare:
    /// `EmbeddedProfile` joins them, so the segments are walked once for everything.
    package var iccChunks: [Int: Range<Int>] = [:]
    package var iccDeclared = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        var i = 2
        var segments = 0
        let iccTag = Array("ICC_PROFILE".utf8) + [0]
        // 1,024 segments: a 16 MB profile (EmbeddedProfile's limit) spans 256 APP2 segments.
        while i + 4 <= bytes.count, segments < 1024 {
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
            if marker == 0xE2, payload.count > 14, Array(bytes[payload.lowerBound..<payload.lowerBound + 12]) == iccTag {
                let sequence = Int(bytes[payload.lowerBound + 12]), total = Int(bytes[payload.lowerBound + 13])
                iccDeclared = max(iccDeclared, total)
                if sequence >= 1 { iccChunks[sequence] = (payload.lowerBound + 14)..<payload.upperBound }
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
