/// The routes that answer with a derivative (or the original) of a file under the root: the first segment
/// of a media URL. Read from the route's text with a switch (no hashing), and the index of the series
/// `ServerMetrics` keeps per route.
enum MediaRoute: Int, CaseIterable, Sendable {
    case mp4, thumb, poster, preview, storyboard, original

    /// The media route named `route`, or nil for any other route.
    init?(_ route: String) {
        switch route {
        case "mp4": self = .mp4
        case "thumb": self = .thumb
        case "poster": self = .poster
        case "preview": self = .preview
        case "storyboard": self = .storyboard
        case "original": self = .original
        default: return nil
        }
    }

    /// The route as it appears in URLs, logs and metrics.
    var name: String {
        switch self {
        case .mp4: "mp4"
        case .thumb: "thumb"
        case .poster: "poster"
        case .preview: "preview"
        case .storyboard: "storyboard"
        case .original: "original"
        }
    }
}
