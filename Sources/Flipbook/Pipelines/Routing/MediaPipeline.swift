/// One pipeline of the router: it says which media types it takes and does the work for them. New kinds of
/// media plug in by registering a pipeline; the router itself does not change.
public protocol MediaPipeline: Sendable {
    /// A short name for logs and errors.
    var name: String { get }
    /// Whether this pipeline handles `type`.
    func accepts(_ type: MediaType) -> Bool
    /// Reads only headers (no pixel decoding) and reports what the input is.
    func probe(_ input: MediaInput) throws -> MediaInfo
    /// Decodes a thumbnail: upright, exactly the planned size, RGB or RGBA.
    func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image
}
