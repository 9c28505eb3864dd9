/// Why a gallery or listing request was refused: an HTTP status, a short code for the JSON error body
/// (`{"error": code, "message": ...}`, as the rest of the server answers) and a message for people.
public struct GalleryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// HTTP status: 400 (bad cursor or limit), 404 (no such folder, hidden, or outside the root).
    public var status: Int
    /// Machine-readable code: `bad-cursor`, `bad-parameter`, `not-found`.
    public var code: String
    /// What went wrong, for people.
    public var message: String

    /// An error with `status`, `code` and `message`.
    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func notFound(_ message: String = "no such folder") -> GalleryError { GalleryError(404, "not-found", message) }
}
