#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Flipbook
import FlipbookCodecs

@main
struct FlipbookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flipbook",
        abstract: "Thumbnails, frames and probes for images and video.",
        subcommands: [Thumb.self, Frames.self, Convert.self, Poster.self, PreviewCommand.self, StoryboardCommand.self, BundleCommand.self, Probe.self, IngestCommand.self, ServeCommand.self, WorkerCommand.self, QueueCommand.self]
    )

    /// The first Ctrl-C asks running decodes and encodes to stop at their next frame (they fail with a
    /// "cancelled" error and write nothing: outputs are atomic); a second one ends the process at once.
    static func main() {
        // Before parsing: ArgumentParser's own --version would need the text at start-up, and reading the
        // lazily loaded libraries' versions loads them, which no other command should pay for.
        if CommandLine.arguments.dropFirst().first == "--version" {
            printOut(BuildInfo.versionText())
            return
        }
        LibAVLog.silenceProcessWide()  // the executable's choice; the library leaves libav's log level alone
        signal(SIGINT) { _ in
            Cancellation.requestStop()
            signal(SIGINT, SIG_DFL)
        }
        main(nil)
    }
}
