/// The percent-encoding SigV4 and S3 use ("UriEncode" in AWS's documentation): the RFC 3986 unreserved
/// characters A-Z a-z 0-9 - _ . ~ stay, every other byte of the UTF-8 text becomes %XX with upper-case hex
/// (a space is %20, never +). Paths keep '/'; query names and values encode it as %2F.
/// Costs one pass over the UTF-8 bytes and one string allocation.
package enum AWSPercentEncoding {
    /// `text` encoded; '/' is kept when `keepingSlash` (a path), encoded otherwise (a query name or value).
    package static func encode(_ text: some StringProtocol, keepingSlash: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `byte` is an RFC 3986 unreserved character: A-Z a-z 0-9 - _ . ~
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
