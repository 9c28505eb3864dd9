import Crypto

/// imgproxy-style URL signatures: `sig` = base64url, no padding, of HMAC-SHA256(key, salt + target), where
/// target is the raw request target as received with the final `sig` parameter removed. Covers path and
/// query exactly as sent: nothing is decoded or re-encoded first.
public struct URLSigner: Sendable {
    // Raw bytes: SymmetricKey is not Sendable; making one per request costs a 32-byte copy.
    let keyBytes: [UInt8]
    let salt: [UInt8]
    var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// A signer for `key` and `salt` (raw bytes).
    public init(key: [UInt8], salt: [UInt8]) {
        self.keyBytes = key
        self.salt = salt
    }

    /// A signer from hex strings, or nil if either is not hex (or the key is empty).
    public init?(keyHex: String, saltHex: String) {
        guard let key = Self.fromHex(keyHex), !key.isEmpty, let salt = Self.fromHex(saltHex) else { return nil }
        self.init(key: key, salt: salt)
    }

    /// The `sig` value for `target` (path and query, without `sig`).
    public func signature(for target: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: salt + Array(target.utf8), using: key)
        return Self.base64url(Array(mac))
    }

    /// `target` with its `sig` parameter appended (`?sig=` or `&sig=`).
    public func sign(_ target: String) -> String {
        target + (target.contains("?") ? "&" : "?") + "sig=" + signature(for: target)
    }

    /// Whether `target` ends with a valid `sig` parameter. The comparison is constant-time
    /// (swift-crypto's `isValidAuthenticationCode`).
    public func verify(_ target: String) -> Bool {
        guard let (unsigned, sig) = Self.split(target), let mac = Self.fromBase64url(sig) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: salt + Array(unsigned.utf8), using: key)
    }

    /// Splits `target` into the signed part and the value of its last query parameter, if that is `sig`.
    static func split(_ target: String) -> (String, String)? {
        guard let question = target.firstIndex(of: "?") else { return nil }
        let query = target[target.index(after: question)...]
        let separator: String.Index
        if let amp = query.lastIndex(of: "&") { separator = amp } else { separator = question }
        let last = target[target.index(after: separator)...]
        guard last.hasPrefix("sig=") else { return nil }
        return (String(target[..<separator]), String(last.dropFirst(4)))
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i]), b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            if i + 1 < bytes.count { out.append(alphabet[n >> 6 & 63]) }
            if i + 2 < bytes.count { out.append(alphabet[n & 63]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func fromBase64url(_ text: String) -> [UInt8]? {
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

    static func fromHex(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }
}
