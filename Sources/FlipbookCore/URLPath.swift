/// Percent-encoding of path segments for the URLs Flipbook emits (the gallery's links, storyboard sheet
/// URLs). Everything but RFC 3986's unreserved characters is escaped, so a browser sends the target back byte
/// for byte (it never decodes %XX in a path) and a signature made over the emitted target still matches what
/// the server receives.
public enum URLPath {
    /// `segment` with every byte outside `A-Z a-z 0-9 - . _ ~` written as %XX (upper-case hex).
    public static func encode(_ segment: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(segment.utf8.count)
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Segments encoded and joined with '/'.
    public static func encode(_ segments: [String]) -> String {
        segments.map { encode($0) }.joined(separator: "/")
    }
}
