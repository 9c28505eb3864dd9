import ArgumentParser
import Dispatch
import Flipbook
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Fit: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}

struct Thumb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Make thumbnails of images (JPEG, PNG, WebP, AVIF, HEIC, BMP, TIFF, and a GIF frame).",
        discussion: """
            With one input, -o names the output file (its extension picks the format) or a directory. With \
            several inputs, -o is a directory and they are processed in parallel.
            """)

    @Argument(help: "Input files or http(s) URLs.") var inputs: [String]
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .shortAndLong, help: "Output file or directory.") var output: String
    @Option(help: "Longer side (inside) or square side (cover), in pixels.") var size = 256
    @Option(help: "inside: keep aspect ratio; cover: centre-cropped square.") var fit: Fit = .inside
    @Option(help: "JPEG/WebP quality, 1-100.") var quality = 80
    @Option(help: "jpeg, png or webp (default: from the output extension, else jpeg).") var format: OutputFormat?
    @Flag(help: "Enlarge images smaller than the requested size.") var upscale = false
    @Option(help: "Parallel workers for several inputs (default: the number of cores).") var jobs: Int?
    @Option(help: "Refuse images larger than this many megapixels.") var maxMegapixels = 100
    @Option(help: "For animated inputs (GIF): which frame, from 0 (default 0; past the end: the last).") var frame = 0
    @Flag(help: "Keep the source's ICC profile, embedded in the output, instead of converting to sRGB (CMYK sources are still converted).")
    var keepProfile = false

    func validate() throws {
        guard size > 0 else { throw ValidationError("--size must be positive") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1 to 100") }
        guard maxMegapixels > 0 else { throw ValidationError("--max-megapixels must be positive") }
        guard frame >= 0 else { throw ValidationError("--frame must be 0 or more") }
        if format == nil, output != "-", inputs.count == 1, !output.hasSuffix("/"), !isDirectory(output) {
            _ = try stillFormat(of: output, option: "-o")
        }
    }

    func run() throws {
        if inputs == ["-"] || output == "-" { return try runStream() }
        let toDirectory = inputs.count > 1 || isDirectory(output) || output.hasSuffix("/")
        let chosenFormat = format ?? (toDirectory ? nil : fileExtension(output).flatMap(OutputFormat.init(fileExtension:))) ?? .jpeg

        var jobsList: [(input: String, output: String)] = []
        var seen: [String: String] = [:]
        for input in inputs {
            let destination = toDirectory ? "\(output)/\(stem(input)).\(chosenFormat.fileExtension)" : output
            if let other = seen[destination] {
                throw ValidationError("\(input) and \(other) would both be written to \(destination)")
            }
            seen[destination] = input
            jobsList.append((input, destination))
        }

        let request = ThumbnailRequest(maxPixelSize: size, fit: fit, upscale: upscale, quality: quality, format: chosenFormat,
                                       frameIndex: frame, keepProfile: keepProfile)
        let limits = Limits(maxPixels: maxMegapixels * 1_000_000)
        let failures = Atomic<Int>(0)
        let progress = Progress(total: jobsList.count)
        let next = Atomic<Int>(0)
        let allInputs = inputs
        let plan = jobsList
        let work: @Sendable (Int) -> Void = { _ in
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < plan.count else { return }
                let job = plan[i]
                do {
                    let input = try openMedia(job.input, sources: sources, limits: limits)
                    let thumbnail = try input.thumbnail(request)
                    try writeAtomically(thumbnail.data, to: job.output, protecting: allInputs)
                    printWarnings(thumbnail.warnings, of: job.input)
                    progress.step(failed: false)
                } catch {
                    failures.add(1, ordering: .relaxed)
                    progress.step(failed: true)
                    printError(failureLine(job.input, error))
                }
            }
        }
        let workers = min(jobsList.count, max(1, jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        if workers <= 1 {
            work(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: workers, execute: work)
        }
        let failed = failures.load(ordering: .relaxed)
        if failed > 0 {
            throw ExitCode(1)
        }
    }
}

extension Thumb {
    /// `-` as the input (stdin) and/or the output (stdout): one image, in memory. The format comes from
    /// --format, else the output's extension, else JPEG.
    func runStream() throws {
        guard inputs.count == 1 else { throw ValidationError("`-` takes one input") }
        let chosen = format ?? (output == "-" ? nil : fileExtension(output).flatMap(OutputFormat.init(fileExtension:))) ?? .jpeg
        do {
            let limits = Limits(maxPixels: maxMegapixels * 1_000_000)
            let input = inputs[0] == "-" ? try MediaInput(bytes: try readAll(fd: 0, limit: limits.maxInputBytes), name: "stdin", limits: limits)
                                         : try openMedia(inputs[0], sources: sources, limits: limits)
            let thumbnail = try input.thumbnail(ThumbnailRequest(maxPixelSize: size, fit: fit, upscale: upscale, quality: quality,
                                                                 format: chosen, frameIndex: frame, keepProfile: keepProfile))
            if output == "-" {
                try writeAll(thumbnail.data, fd: 1)
            } else {
                try writeAtomically(thumbnail.data, to: output, protecting: inputs[0] == "-" ? [] : inputs)
            }
            printWarnings(thumbnail.warnings, of: inputs[0])
        } catch {
            printError(failureLine(inputs[0], error))
            throw ExitCode(1)
        }
    }
}
