/// Encoded output formats for stills.
public enum OutputFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp

    /// The MIME type: image/jpeg, image/png or image/webp.
    public var mimeType: String { "image/\(rawValue)" }

    /// The usual file extension.
    public var fileExtension: String { rawValue == "jpeg" ? "jpg" : rawValue }

    /// The format a file name's extension asks for, if any.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        default: return nil
        }
    }
}
