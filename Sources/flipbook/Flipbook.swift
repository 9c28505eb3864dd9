import ArgumentParser
import Flipbook

@main
struct FlipbookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flipbook",
        abstract: "Thumbnails, frames and probes for images and video.",
        subcommands: [Thumb.self, Frames.self, Convert.self, Poster.self, PreviewCommand.self, StoryboardCommand.self, BundleCommand.self, Probe.self, ServeCommand.self]
    )
}
