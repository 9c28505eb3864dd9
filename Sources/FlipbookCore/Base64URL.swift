/// Base64url without padding (RFC 4648 section 5): what URL signatures and the gallery's listing cursors are
/// written in. Pure functions over bytes; no Foundation.
public enum Base64URL {
    package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` as base64url text, without `=` padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            let n = Int(bytes[i]) << 16 | b1 << 8 | b2
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            if i + 1 < bytes.count { out.append(alphabet[n >> 6 & 63]) }
            if i + 2 < bytes.count { out.append(alphabet[n & 63]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil if it holds a character outside the alphabet (padding included) or
    /// has a length no encoding gives.
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [Int] = []
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(Int(c) - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(Int(c) - 97 + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(Int(c) - 48 + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n = 0
            for (k, v) in chunk.enumerated() { n |= v << (18 - 6 * k) }
            out.append(UInt8(n >> 16 & 255))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 255)) }
            if chunk.count > 3 { out.append(UInt8(n & 255)) }
            i += 4
        }
        return out
    }
}
