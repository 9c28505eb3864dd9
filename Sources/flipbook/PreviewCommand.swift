import ArgumentParser
import Flipbook

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Write a short silent looping MP4 of segments spread across a video (hover previews).")

    @Argument(help: "Input video.") var input: String
    @Option(name: .shortAndLong, help: "Output .mp4 (or .webm with --codec vp9/av1).") var output: String
    @Option(help: "Number of segments.") var segments = 5
    @Option(help: "Length of each segment: 1s, 800ms or seconds.") var segmentLength = "1s"
    @Option(help: "Longer side, in pixels.") var size = 320
    @Option(help: "Cap on frames per second.") var fps: Double?
    @Option(help: "Constant rate factor.") var crf = 23
    @Option(help: "h264, hevc, vp9 or av1.") var codec: VideoCodec = .h264

    func validate() throws {
        guard case .seconds(let s)? = PosterPosition(segmentLength), s > 0 else { throw ValidationError("--segment-length takes 1s, 800ms or seconds") }
        guard segments > 0, size > 1 else { throw ValidationError("--segments and --size must be positive") }
        if let fps, fps <= 0 { throw ValidationError("--fps must be positive") }
    }

    func run() throws {
        do {
            var options = PreviewOptions()
            options.segments = segments
            if case .seconds(let s)? = PosterPosition(segmentLength) { options.segmentLength = s }
            options.size = size
            options.fps = fps
            options.video.crf = crf
            options.video.codec = codec
            options.format = fileExtension(output).flatMap(PreviewFormat.init(fileExtension:)) ?? .mp4
            let result = try VideoPreview.make(try MediaInput(path: input), options: options)
            try writeAtomically(result.data, to: output, protecting: [input])
            printError("\(output): \(result.width)x\(result.height), \(result.frames) frames, \(result.durationMs) ms, \(result.data.count) bytes")
        } catch {
            printError("flipbook: \(input): \(describe(error))")
            throw ExitCode(1)
        }
    }
}
