import CPNG

/// Puts an ICC profile into encoded output (`--keep-profile`), the way each format carries one: JPEG APP2
/// "ICC_PROFILE" segments after the JFIF header, a zlib-compressed PNG `iCCP` chunk after `IHDR`, a WebP
/// `ICCP` chunk in an extended (VP8X) file. Costs one copy of the output plus the profile.
package enum ProfileEmbedding {
    package static func embed(_ profile: [UInt8], in data: [UInt8], format: OutputFormat) -> [UInt8] {
        guard !profile.isEmpty else { return data }
        switch format {
        case .jpeg: return jpeg(profile, data) ?? data
        case .png: return png(profile, data) ?? data
        case .webp: return webp(profile, data) ?? data
        }
    }

    package static func jpeg(_ profile: [UInt8], _ data: [UInt8]) -> [UInt8]? {
        guard data.count > 4, data[0] == 0xFF, data[1] == 0xD8 else { return nil }
        var at = 2
        if data[2] == 0xFF, data[3] == 0xE0, data.count > 6 { at = 4 + (Int(data[4]) << 8 | Int(data[5])) }  // after JFIF APP0
        let size = 65519
        let count = (profile.count + size - 1) / size
        guard count <= 255 else { return nil }
        var segments: [UInt8] = []
        for n in 0..<count {
            let chunk = profile[(n * size)..<min(profile.count, (n + 1) * size)]
            let length = 2 + 14 + chunk.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8) + [0, UInt8(n + 1), UInt8(count)]
            segments += chunk
        }
        return Array(data[..<at]) + segments + Array(data[at...])
    }

    package static func png(_ profile: [UInt8], _ data: [UInt8]) -> [UInt8]? {
        guard data.count > 33, Array(data[12..<16]) == Array("IHDR".utf8) else { return nil }
        var bound = compressBound(uLong(profile.count))
        var compressed = [UInt8](repeating: 0, count: Int(bound))
        guard compress2(&compressed, &bound, profile, uLong(profile.count), 9) == Z_OK else { return nil }
        let body = Array("iCCP".utf8) + Array("ICC profile".utf8) + [0, 0] + compressed.prefix(Int(bound))
        let crc = UInt32(crc32(0, body, uInt(body.count)))
        let length = UInt32(body.count - 4)
        let chunk = be32(length) + body + be32(crc)
        return Array(data[..<33]) + chunk + Array(data[33...])
    }

    package static func webp(_ profile: [UInt8], _ data: [UInt8]) -> [UInt8]? {
        guard data.count > 30, Array(data[0..<4]) == Array("RIFF".utf8), Array(data[8..<12]) == Array("WEBP".utf8) else { return nil }
        let first = String(decoding: data[12..<16], as: UTF8.self)
        var iccp = Array("ICCP".utf8) + le32(UInt32(profile.count)) + profile
        if profile.count & 1 == 1 { iccp.append(0) }
        var body: [UInt8]
        if first == "VP8X" {
            var vp8x = Array(data[12..<30])
            vp8x[8] |= 0x20
            body = vp8x + iccp + Array(data[30...])
        } else {
            // A simple file: the canvas size comes from its VP8/VP8L header.
            let b = Array(data[20...])
            let w: Int, h: Int
            if first == "VP8 ", b.count >= 10 {
                w = (Int(b[6]) | Int(b[7]) << 8) & 0x3FFF; h = (Int(b[8]) | Int(b[9]) << 8) & 0x3FFF
            } else if first == "VP8L", b.count >= 5 {
                let bits = Int(b[1]) | Int(b[2]) << 8 | Int(b[3]) << 16 | Int(b[4]) << 24
                w = (bits & 0x3FFF) + 1; h = (bits >> 14 & 0x3FFF) + 1
            } else { return nil }
            let alpha: UInt8 = first == "VP8L" ? 0x10 : 0
            let vp8x = Array("VP8X".utf8) + le32(10) + [0x20 | alpha, 0, 0, 0] + le24(w - 1) + le24(h - 1)
            body = vp8x + iccp + Array(data[12...])
        }
        return Array("RIFF".utf8) + le32(UInt32(4 + body.count)) + Array("WEBP".utf8) + body
    }

    private static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    private static func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
}
