import Flipbook
import FlipbookCodecs

/// What this build is: Flipbook's version and the C libraries it loaded, for `flipbook --version` and the
/// `flipbook_build_info` gauge of `serve` and `worker`.
enum BuildInfo {
    /// `flipbook --version`: as `ffmpeg -version` does, Flipbook's version, then one line per library with the
    /// version it was built against and the one loaded (libav and libheif are loaded to read theirs).
    static func versionText() -> String {
        let missing = LibraryVersions.loadAll()
        var lines = ["flipbook \(FlipbookVersion.current)"]
        for entry in LibraryVersions.current() {
            var line = entry.name.padding(toLength: 14, withPad: " ", startingAt: 0)
            switch (entry.built, entry.runtime) {
            case let (built?, runtime?): line += "\(built) / \(runtime)"
            case let (nil, runtime?): line += runtime
            case let (built?, nil): line += "\(built) (built with; loaded: \(entry.file ?? "not loaded"))"
            case (nil, nil): line += "not loaded" + (entry.name == "libheif" ? missing["libheif"].map { " (\($0))" } ?? "" : "")
            }
            lines.append(line)
        }
        if let why = missing["libav"] { lines.append("libav could not be loaded: \(why)") }
        return lines.joined(separator: "\n")
    }

    /// The gauge's labels: `version` and one per library (`libavcodec`, `libx264`, `libjpeg_turbo`, ...),
    /// from what this process has loaded (call after loading libav).
    static func labels() -> [(String, String)] {
        [("version", FlipbookVersion.current)] + LibraryVersions.current().map {
            ($0.name.replacingOccurrences(of: "-", with: "_"), $0.runtime ?? $0.built ?? "not-loaded")
        }
    }
}
