/// Hexadecimal text and bytes: digests in cache file names, ETags and ingest results; keys and
/// percent-escapes read back.
package enum Hex {
    /// Two lowercase hex digits per byte, in order.
    package static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit (either case), or nil.
    package static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        case 0x41...0x46: digit - 0x41 + 10
        default: nil
        }
    }

    /// The bytes that pairs of hex digits (either case) spell; nil for an odd count or any other character.
    package static func bytes(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let hi = value(of: chars[i]), let lo = value(of: chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }
}
