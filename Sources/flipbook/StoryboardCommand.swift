import ArgumentParser
import Flipbook

struct StoryboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyboard",
        abstract: "Write seek-bar preview sprites (JPEG sheets) and a WebVTT file pointing into them.")

    @Argument(help: "Input video: a file or an http(s) URL.") var input: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .shortAndLong, help: "Output directory.") var output: String
    @Option(help: "Time between tiles: 10s, 500ms or seconds.") var interval = "10s"
    @Option(help: "Exactly this many tiles over the whole video (instead of --interval).") var count: Int?
    @Option(help: "Tiles per row.") var columns = 10
    @Option(help: "Longer side of each tile, in pixels.") var size = 160
    @Option(help: ArgumentHelp("Decoder threads (default: automatic, as many as fit 64 MB of frames in flight; one for 8K).",
                               discussion: "Each thread holds one more decoded frame: 2 on an 8K clip is ~1.6x faster and ~40 MB bigger."))
    var threads: Int?

    func validate() throws {
        guard case .seconds(let s)? = PosterPosition(interval), s > 0 else { throw ValidationError("--interval takes 10s, 500ms or seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        guard columns > 0, size > 0 else { throw ValidationError("--columns and --size must be positive") }
        if let threads, !(1...16).contains(threads) { throw ValidationError("--threads takes 1 to 16") }
    }

    func run() throws {
        do {
            var options = StoryboardOptions()
            if case .seconds(let s)? = PosterPosition(interval) { options.interval = s }
            options.count = count
            options.columns = columns
            options.tileSize = size
            options.decodeThreads = threads
            let board = try Storyboard.make(try openMedia(input, sources: sources), options: options)
            // `-o sheets/` names the same folder as `-o sheets`: no double slash in the paths we print.
            let folder = output.count > 1 && output.hasSuffix("/") ? String(output.dropLast()) : output
            try writeStoryboard(board, to: folder, protecting: [input])
            printError("\(board.cues.count) tiles in \(board.sheets.count) sheet(s), \(folder)/storyboard.vtt")
        } catch {
            printError(failureLine(input, error))
            throw ExitCode(1)
        }
    }
}
