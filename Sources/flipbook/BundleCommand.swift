import ArgumentParser
import Flipbook

struct BundleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Poster, storyboard and preview of a video from one decode pass.")

    @Argument(help: "Input video: a file or an http(s) URL.") var input: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(help: "Poster image (.jpg, .png or .webp).") var poster: String?
    @Option(help: "Poster position: 12.5s, 1500ms or 10%.") var at = "10%"
    @Option(help: "Poster's longer side, in pixels.") var posterSize = 256
    @Option(help: "Storyboard directory (sheets and storyboard.vtt).") var storyboard: String?
    @Option(help: "Storyboard tiles: time between them (10s, 500ms or seconds).") var interval = "10s"
    @Option(help: "Preview clip (.mp4, .webm, .webp or .gif).") var preview: String?
    @Option(help: "Preview's longer side, in pixels.") var previewSize = 320

    func validate() throws {
        guard poster != nil || storyboard != nil || preview != nil else { throw ValidationError("give --poster, --storyboard or --preview") }
        guard PosterPosition(at) != nil else { throw ValidationError("--at takes 12.5s, 1500ms or 10%") }
        guard case .seconds(let s)? = PosterPosition(interval), s > 0 else { throw ValidationError("--interval takes 10s, 500ms or seconds") }
        guard posterSize > 0, previewSize > 1 else { throw ValidationError("sizes must be positive") }
        if let poster { _ = try stillFormat(of: poster, option: "--poster") }
        if let preview, fileExtension(preview).flatMap(PreviewFormat.init(fileExtension:)) == nil {
            throw ValidationError("--preview must end in .mp4, .m4v, .mov, .webm, .gif or .webp")
        }
    }

    func run() throws {
        do {
            var request = VideoBundleRequest()
            let posterFormat = poster.flatMap(fileExtension).flatMap(OutputFormat.init(fileExtension:)) ?? .jpeg
            if poster != nil {
                var options = PosterOptions()
                options.position = PosterPosition(at)!
                request.poster = (ThumbnailRequest(maxPixelSize: posterSize, format: posterFormat), options)
            }
            if storyboard != nil {
                var options = StoryboardOptions()
                if case .seconds(let s)? = PosterPosition(interval) { options.interval = s }
                request.storyboard = options
            }
            if let preview {
                var options = PreviewOptions()
                options.size = previewSize
                options.format = fileExtension(preview).flatMap(PreviewFormat.init(fileExtension:)) ?? .mp4
                if options.format == .webm { options.video.codec = .vp9 }  // WebM cannot hold H.264
                request.preview = options
            }
            let made = try VideoBundle.make(try openMedia(input, sources: sources), request)
            if let poster, let image = made.poster {
                try writeAtomically(try EncodedImage(image: image, format: posterFormat, quality: 80).data, to: poster, protecting: [input])
            }
            if let storyboard, let board = made.storyboard {
                try writeStoryboard(board, to: storyboard, protecting: [input])
            }
            if let preview, let clip = made.preview {
                try writeAtomically(clip.data, to: preview, protecting: [input])
            }
            printError("\(input): \(made.framesDecoded) frames decoded, \(made.seeks) seek(s)")
        } catch {
            printError(failureLine(input, error))
            throw ExitCode(1)
        }
    }
}
