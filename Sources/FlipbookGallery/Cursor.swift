import Flipbook
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
