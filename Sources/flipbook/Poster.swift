import ArgumentParser
import Flipbook

struct Poster: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poster",
        abstract: "Write a poster frame of a video: upright, scaled, skipping black or blank frames.")

    @Argument(help: "Input video: a file, or an http(s) URL (read by ranges).") var input: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .shortAndLong, help: "Output image (.jpg, .png or .webp).") var output: String
    @Option(help: "Where: 12.5s, 1500ms or 10% of the duration.") var at = "10%"
    @Option(help: "Longer side (inside) or square side (cover), in pixels.") var size = 256
    @Option(help: "inside or cover.") var fit: Fit = .inside
    @Option(help: "JPEG/WebP quality, 1-100.") var quality = 80
    @Flag(help: "Decode up to the exact time instead of taking the first good frame after the keyframe before it.")
    var exact = false
    @Flag(help: "Pick the most representative of a window of frames (histogram closest to the window's mean) instead of the first good one.")
    var representative = false
    @Flag(help: "Print how many bytes of the file were read.") var stats = false

    func validate() throws {
        guard PosterPosition(at) != nil else { throw ValidationError("--at takes 12.5s, 1500ms or 10%") }
        guard size > 0 else { throw ValidationError("--size must be positive") }
        if output != "-" { _ = try stillFormat(of: output, option: "-o") }
    }

    func run() throws {
        do {
            var options = PosterOptions()
            options.position = PosterPosition(at)!
            options.exact = exact
            options.representative = representative
            var router = MediaRouter.standard
            router.register(VideoPipeline(posterOptions: options))
            // `-`: the video from standard input (read into memory) and/or the image to standard output.
            let media = input == "-" ? try MediaInput(bytes: try readAll(fd: 0), name: "stdin", router: router)
                                     : try openMedia(input, sources: sources, router: router)
            guard media.type.isVideo else { throw FlipbookError(.unsupported, "\(input) is \(media.type), not a video") }
            let format = output == "-" ? .jpeg : fileExtension(output).flatMap(OutputFormat.init(fileExtension:)) ?? .jpeg
            let image = try media.thumbnailImage(ThumbnailRequest(maxPixelSize: size, fit: fit, quality: quality, format: format))
            let encoded = try EncodedImage(image: image, format: format, quality: quality)
            if output == "-" {
                try writeAll(encoded.data, fd: 1)
            } else {
                try writeAtomically(encoded.data, to: output, protecting: input == "-" ? [] : [input])
            }
            if stats {
                let total = media.source.count, read = media.source.bytesRead
                printError("\(output): \(image.width)x\(image.height); read \(read) of \(total) bytes (\(total > 0 ? read * 100 / total : 0)%)")
            }
        } catch {
            printError(failureLine(input, error))
            throw ExitCode(1)
        }
    }
}
