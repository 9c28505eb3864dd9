import Flipbook

/// Why `DerivativeService.derivative(_:)` failed, beyond the library's own `FlipbookError`s (which it
/// passes through unchanged). Each case has a stable `code` for JSON error bodies.
public enum DerivativeServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path is malformed or tries to leave the root (`..`, an empty segment, "/" or NUL inside one).
    case badPath(String)
    /// No such file under the root, a dotfile, or a symlink that resolves outside the root.
    case notFound(String)
    /// The file is a kind this operation does not take (a video for /mp4, say); `hint` names the route
    /// that does, if any.
    case unsupportedMedia(String, hint: String?)
    /// The queue in front of the workers is full; try again after `retryAfterSeconds`.
    case busy(retryAfterSeconds: Int)
    /// The job ran longer than the configured timeout and was cancelled.
    case timeout(seconds: Double)

    /// Stable machine-readable code.
    public var code: String {
        switch self {
        case .badPath: "bad-path"
        case .notFound: "not-found"
        case .unsupportedMedia: "unsupported-media"
        case .busy: "busy"
        case .timeout: "timeout"
        }
    }

    /// One sentence for logs and error bodies.
    public var description: String {
        switch self {
        case .badPath(let m), .notFound(let m): m
        case .unsupportedMedia(let m, let hint): hint.map { "\(m); use \($0)" } ?? m
        case .busy(let s): "too many jobs are waiting; retry after \(s) s"
        case .timeout(let s): "the job took longer than \(s) s and was cancelled"
        }
    }
}
