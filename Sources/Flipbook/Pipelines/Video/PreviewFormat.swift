/// What a preview is written as.
public enum PreviewFormat: String, Sendable, CaseIterable {
    /// Silent looping MP4 (`PreviewOptions.video.codec`: H.264 by default, or HEVC, VP9, AV1).
    case mp4
    /// WebM (VP9 or AV1).
    case webm
    /// Animated GIF: one palette for the whole preview, dithered, loops forever.
    case gif
    /// Animated WebP (lossy, libwebp through libavcodec), loops forever.
    case webp

    /// The format an output file's extension asks for: .mp4, .m4v, .mov, .webm, .gif or .webp.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "mp4", "m4v", "mov": self = .mp4
        case "webm": self = .webm
        case "gif": self = .gif
        case "webp": self = .webp
        default: return nil
        }
    }

    /// Shortest time a frame may be shown, in ms. Browsers show GIF and WebP frames of 10 ms or less for
    /// 100 ms, and GIF counts in centiseconds, so a GIF frame needs 20 ms and a WebP frame 11 ms; frames
    /// that would be shown for less are left out.
    var minimumFrameMs: Int {
        switch self {
        case .mp4, .webm: 1
        case .gif: 20
        case .webp: 11
        }
    }
}
