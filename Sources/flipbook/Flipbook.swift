#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Flipbook

@main
struct FlipbookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flipbook",
        abstract: "Thumbnails, frames and probes for images and video.",
        subcommands: [Thumb.self, Frames.self, Convert.self, Poster.self, PreviewCommand.self, StoryboardCommand.self, BundleCommand.self, Probe.self, IngestCommand.self, ServeCommand.self, WorkerCommand.self]
    )

    /// The first Ctrl-C asks running decodes and encodes to stop at their next frame (they fail with a
    /// "cancelled" error and write nothing: outputs are atomic); a second one ends the process at once.
    static func main() {
        LibAVLog.silenceProcessWide()  // the executable's choice; the library leaves libav's log level alone
        signal(SIGINT) { _ in
            Cancellation.requestStop()
            signal(SIGINT, SIG_DFL)
        }
        main(nil)
    }
}
