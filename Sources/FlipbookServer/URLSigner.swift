import Crypto
import Flipbook

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
        guard let key = Hex.bytes(keyHex), !key.isEmpty, let salt = Hex.bytes(saltHex) else { return nil }
        self.init(key: key, salt: salt)
    }

    /// The `sig` value for `target` (path and query, without `sig`).
    public func signature(for target: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: salt + Array(target.utf8), using: key)
        return Base64URL.encode(Array(mac))
    }

    /// `target` with its `sig` parameter appended (`?sig=` or `&sig=`).
    public func sign(_ target: String) -> String {
        target + (target.contains("?") ? "&" : "?") + "sig=" + signature(for: target)
    }

    /// Whether `target` ends with a valid `sig` parameter. The comparison is constant-time
    /// (swift-crypto's `isValidAuthenticationCode`).
    public func verify(_ target: String) -> Bool {
        guard let (unsigned, sig) = Self.split(target), let mac = Base64URL.decode(sig) else { return false }
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
}
