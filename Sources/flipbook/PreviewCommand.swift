import ArgumentParser
import Flipbook

extension GIFDither: ExpressibleByArgument {}

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Write a short silent looping clip of segments spread across a video (hover previews).",
        discussion: """
            The output's extension picks the format: .mp4/.m4v/.mov (H.264 or HEVC), .webm (VP9 or AV1), \
            .gif (one dithered palette for all frames; at most 50 frames a second) or .webp (animated, lossy). \
            All loop forever and keep the video's timing to the millisecond (GIF: to the centisecond).
            """)

    @Argument(help: "Input video, or animation (GIF, animated WebP, APNG): a file or an http(s) URL.") var input: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .shortAndLong, help: "Output .mp4, .webm, .gif or .webp.") var output: String
    @Option(help: "Number of segments.") var segments = 5
    @Option(help: "Length of each segment: 1s, 800ms or seconds.") var segmentLength = "1s"
    @Option(help: "Longer side, in pixels.") var size = 320
    @Option(help: "Cap on frames per second (default: the video's own, at most 50 for GIF).") var fps: Double?
    @Option(help: "Constant rate factor (MP4, WebM).") var crf = 23
    @Option(help: "h264, hevc, vp9 or av1 (default: h264 for MP4, vp9 for WebM).") var codec: VideoCodec?
    @Option(help: "Quality, 0-100 (WebP).") var quality = 75
    @Option(help: "Palette entries, 4-256 (GIF).") var colors = 256
    @Option(help: "floyd-steinberg, ordered or none (GIF).") var dither: GIFDither = .floydSteinberg

    func validate() throws {
        guard case .seconds(let s)? = PosterPosition(segmentLength), s > 0 else { throw ValidationError("--segment-length takes 1s, 800ms or seconds") }
        guard segments > 0, size > 1 else { throw ValidationError("--segments and --size must be positive") }
        if let fps, fps <= 0 { throw ValidationError("--fps must be positive") }
        guard (0...100).contains(quality) else { throw ValidationError("--quality takes 0-100") }
        guard (4...256).contains(colors) else { throw ValidationError("--colors takes 4-256") }
        guard fileExtension(output).flatMap(PreviewFormat.init(fileExtension:)) != nil else {
            throw ValidationError("--output must end in .mp4, .m4v, .mov, .webm, .gif or .webp")
        }
    }

    func run() throws {
        do {
            var options = PreviewOptions()
            options.segments = segments
            if case .seconds(let s)? = PosterPosition(segmentLength) { options.segmentLength = s }
            options.size = size
            options.fps = fps
            options.format = fileExtension(output).flatMap(PreviewFormat.init(fileExtension:)) ?? .mp4
            options.video.crf = crf
            // WebM cannot hold H.264: without --codec, a .webm preview gets VP9.
            options.video.codec = codec ?? (options.format == .webm ? .vp9 : .h264)
            options.webp.quality = quality
            options.gif.colors = colors
            options.gif.dither = dither
            let result = try VideoPreview.make(try openMedia(input, sources: sources), options: options)
            try writeAtomically(result.data, to: output, protecting: [input])
            printError("\(output): \(result.width)x\(result.height), \(result.frames) frames, \(result.durationMs) ms, \(result.data.count) bytes")
        } catch {
            printError(failureLine(input, error))
            throw ExitCode(1)
        }
    }
}
