import ArgumentParser
import Flipbook

struct Frames: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frames",
        abstract: "Write the composited frames of a GIF, animated WebP or APNG as images.",
        discussion: "Frames are decoded one at a time: memory stays at one canvas whatever the frame count.")

    @Argument(help: "Input GIF, animated WebP or APNG: a file or an http(s) URL.") var input: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .shortAndLong, help: "Output directory.") var output: String
    @Option(help: "Longer side of each frame, in pixels (default: canvas size).") var size: Int?
    @Option(help: "png or jpeg (JPEG flattens transparency onto white).") var format: OutputFormat = .png
    @Option(help: "Only the frame shown at this time: 2.5s, 1500ms or 2.5 (seconds).") var at: String?
    @Option(help: "Only every Nth frame (0, N, 2N, ...).") var every: Int?
    @Option(help: "JPEG quality, 1-100.") var quality = 90

    func validate() throws {
        if at != nil && every != nil { throw ValidationError("use --at or --every, not both") }
        if let every, every < 1 { throw ValidationError("--every must be at least 1") }
        if let size, size < 1 { throw ValidationError("--size must be positive") }
        if let at, Self.milliseconds(at) == nil { throw ValidationError("--at takes a time such as 2.5s, 1500ms or 2.5") }
    }

    /// Parses "2.5s", "1500ms" or "2.5" (seconds) into milliseconds.
    static func milliseconds(_ text: String) -> Int? {
        let t = text.filter { $0 != " " }.lowercased()
        if t.hasSuffix("ms"), let v = Double(t.dropLast(2)), v >= 0 { return Int(v.rounded()) }
        if t.hasSuffix("s"), let v = Double(t.dropLast()), v >= 0 { return Int((v * 1000).rounded()) }
        if let v = Double(t), v >= 0 { return Int((v * 1000).rounded()) }
        return nil
    }

    func run() throws {
        do {
            let source = try openMedia(input, sources: sources).source
            let type = MediaType.sniff(source)
            guard FrameSources.accepts(type) else {
                throw FlipbookError(.unsupported, "frames takes a GIF, animated WebP or APNG; \(input) is \(type)")
            }
            let animation = try FrameSources.open(source)
            // No folder made here: the first frame written makes it (`writeAtomically`), so a file that
            // fails leaves no empty folder behind.
            // A time past the end shows the last frame, as a player would.
            let selector: FrameSelector = at.flatMap(Self.milliseconds).map { .at([$0]) } ?? every.map { .every($0) } ?? .all
            var written = 0
            let info = animation.info
            try animation.forEachSelected(selector) { frame, canvas in
                try write(frame, FrameScaling.image(canvas, info: info, maxPixelSize: size))
                written += 1
                return true
            }
            printWarnings(animation.warnings, of: input)
            // A damaged file can end before the time asked for (the header counted more frames than could be
            // decoded): an error, where it used to print "0 frame(s) written" and exit 0.
            guard written > 0 else {
                throw FlipbookError(animation.warnings.isEmpty ? .unsupported : .corrupt,
                                    "no frame to write" + (at.map { ": the frames that could be decoded end before \($0)" } ?? ""))
            }
            printError("\(written) frame(s) written to \(output)")
        } catch {
            printError(failureLine(input, error))
            throw ExitCode(1)
        }
    }

    private func write(_ frame: AnimationFrame, _ image: Image) throws {
        let name = "frame-\(String(repeating: "0", count: max(0, 5 - String(frame.index).count)))\(frame.index).\(format.fileExtension)"
        let encoded = try EncodedImage(image: image, format: format, quality: quality)
        try writeAtomically(encoded.data, to: "\(output)/\(name)", protecting: [input])
    }
}
