import Flipbook
/// Percent-encoding of path segments for the URLs the gallery emits. Everything but RFC 3986's unreserved
/// characters is escaped, so a browser sends the target back byte for byte (it never decodes %XX in a
/// path) and a signature made over the emitted target still matches what the server receives.
enum URLPath {
    /// `segment` with every byte outside `A-Z a-z 0-9 - . _ ~` written as %XX (upper-case hex).
    static func encode(_ segment: String) -> String {
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
    static func encode(_ segments: [String]) -> String {
        segments.map { encode($0) }.joined(separator: "/")
    }
}

/// Opaque listing cursors: base64url (no padding) of "v1\n" + the UTF-8 name of the last entry already
/// returned. Names sort the same way every time, so a cursor stays valid while the folder is unchanged
/// and, when entries come and go, carries on after the same name instead of skipping or repeating.
enum Cursor {
    static let prefix = Array("v1\n".utf8)

    /// The cursor that continues after `name`.
    static func after(_ name: [UInt8]) -> String { Base64URL.encode(prefix + name) }

    /// The name a cursor continues after, or nil if it was not made by `after`.
    static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 4096, let bytes = Base64URL.decode(text), bytes.starts(with: prefix) else { return nil }
        let name = Array(bytes.dropFirst(prefix.count))
        return name.isEmpty ? nil : name
    }
}
