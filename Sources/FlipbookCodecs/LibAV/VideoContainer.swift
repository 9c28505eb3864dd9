/// Output containers.
public enum VideoContainer: String, Sendable {
    case mp4, webm

    /// The container a file name's extension asks for.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "mp4", "m4v", "mov": self = .mp4
        case "webm": self = .webm
        default: return nil
        }
    }
}
