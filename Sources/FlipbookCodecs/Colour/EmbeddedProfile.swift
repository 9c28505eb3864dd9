/// Finds the ICC profile a file embeds, without decoding pixels. Each reader walks only segment or chunk
/// headers and copies the profile bytes (typically 0.5-4 KB; at most 16 MB is accepted).
package enum EmbeddedProfile {
    package static let maxBytes = 16 << 20

    /// JPEG: the APP2 "ICC_PROFILE\0" segments, joined in their sequence-number order (a profile over
    /// 64 KB spans several). Nil if there are none or the sequence is incomplete.
    package static func jpeg(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        jpeg(bytes, markers: JPEGMarkers(bytes))
    }

    /// The same from segments already walked (the thumbnail path reads SOF, EXIF and the profile in one walk).
    package static func jpeg(_ bytes: UnsafeRawBufferPointer, markers: JPEGMarkers) -> [UInt8]? {
        let declared = markers.iccDeclared, chunks = markers.iccChunks
        guard declared > 0, chunks.count == declared else { return nil }
        var profile: [UInt8] = []
        for n in 1...declared {
            guard let range = chunks[n] else { return nil }
            profile.append(contentsOf: bytes[range])
            if profile.count > maxBytes { return nil }
        }
        return profile
    }

    /// WebP: the `ICCP` chunk of an extended (VP8X) file.
    package static func webp(_ source: some ByteSource) -> [UInt8]? {
        guard let riff = try? source.bytes(at: 0, length: 12), riff.count == 12 else { return nil }
        let end = min(source.count, 8 + (Int(riff[4]) | Int(riff[5]) << 8 | Int(riff[6]) << 16 | Int(riff[7]) << 24))
        var offset = 12, chunks = 0
        while offset + 8 <= end, chunks < 64 {
            guard let head = try? source.bytes(at: offset, length: 8), head.count == 8 else { return nil }
            let length = Int(head[4]) | Int(head[5]) << 8 | Int(head[6]) << 16 | Int(head[7]) << 24
            let fourcc = String(decoding: head[0..<4], as: UTF8.self)
            if fourcc == "ICCP" {
                guard length <= maxBytes, let body = try? source.bytes(at: offset + 8, length: length), body.count == length
                else { return nil }
                return body
            }
            // The profile comes before the image data; past that there is none.
            if ["VP8 ", "VP8L", "ANIM", "ANMF"].contains(fourcc) { return nil }
            offset += 8 + length + (length & 1)
            chunks += 1
        }
        return nil
    }
}
