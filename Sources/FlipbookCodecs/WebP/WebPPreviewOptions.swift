/// Animated WebP settings. Every property documents its default.
public struct WebPPreviewOptions: Sendable {
    /// Lossy quality, 0-100 (libwebp's `-q`). Default 75, libwebp's own default.
    public var quality = 75

    /// Every option at its documented default.
    public init() {}
}

extension WebPPreviewOptions {
    package func validate() throws {
        guard (0...100).contains(quality) else { throw FlipbookError(.invalidArgument, "WebP quality must be 0-100, not \(quality)") }
    }
}
