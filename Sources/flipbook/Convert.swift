import ArgumentParser
import Dispatch
import Flipbook
import FlipbookStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension VideoCodec: ExpressibleByArgument {}

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert GIFs, animated WebPs and APNGs to looping, silent, timing-exact MP4 (or WebM).",
        discussion: """
            INPUT is files or directories (searched recursively; files that are not GIFs, animated WebPs or \
            APNGs, still WebP and PNG included, are skipped with a note; one input file that is not one fails). With one input file, -o may name the output file; otherwise -o is a directory that mirrors \
            the input tree. Outputs that are newer than their input are skipped, so an interrupted run can be \
            started again; every output is written to a temporary file and renamed into place.
            """)

    @Argument(help: "GIF, animated WebP or APNG files, or directories.") var inputs: [String]
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var sources: SourceOptions
    @Option(name: .shortAndLong, help: "Output file (one input) or directory.") var output: String
    @Option(help: ArgumentHelp("Constant rate factor (lower: better and bigger), used as given for every file.",
                               discussion: "Without it, GIFs get Flipbook's own settings (a crf picked from the first frame: 27 for drawn, 26 for shaded, 25 for photographic pictures; more bits for colour, a flatter rate curve for drawn pictures and a more thorough analysis than the preset's), and files start at crf 23 and go lower when their measured SSIM falls under --min-ssim (by default only animated WebP and APNG have a floor)."))
    var crf: Int?
    @Option(help: "Search the crf per file for the smallest video whose SSIM (against its own input frames) is at least this, e.g. 0.98.")
    var targetSsim: Double?
    @Option(help: "Quality floor: files whose SSIM (against their own input frames) comes out under it are encoded again at a lower crf. Default without --crf: 0.97 for animated WebP and APNG, none for GIF.")
    var minSsim: Double?
    @Option(name: .customLong("x264-params"), help: .hidden) var x264Params: String?
    @Option(help: "Encoder preset (ultrafast ... veryslow).") var preset = "medium"
    @Option(help: "Longer side at most N pixels, never enlarged (default: the GIF's own size).") var size: Int?
    @Option(name: .customLong("max-size"), help: .hidden) var maxSizeAlias: Int?
    @Option(help: "Colour under transparent pixels, #RRGGBB.") var background = "#FFFFFF"
    @Option(help: "h264, hevc, vp9 or av1 (default: h264 for MP4, vp9 for WebM).") var codec: VideoCodec?
    @Option(help: "Parallel conversions (default: the number of cores).") var jobs: Int?
    @Option(help: "Take only shard I of N (I from 0), by a stable hash of each file's path under its input root.")
    var shard: String?
    @Flag(help: "Keep the original (copied to the output tree) when the video would be larger.") var keepSmaller = false
    @Option(help: "Write a JSON-lines report here.") var report: String?
    @Flag(help: "Also write a JPEG poster (first frame) beside each video.") var poster = false

    func validate() throws {
        if let crf, !(0...63).contains(crf) { throw ValidationError("--crf must be 0 to 63") }
        for (name, value) in [("--target-ssim", targetSsim), ("--min-ssim", minSsim)] {
            if let value, !(value > 0 && value < 1) { throw ValidationError("\(name) must be an SSIM between 0 and 1 (exclusive)") }
        }
        if targetSsim != nil && (crf != nil || minSsim != nil) {
            throw ValidationError("--target-ssim chooses the crf: give it without --crf and --min-ssim")
        }
        if let maxSize = size ?? maxSizeAlias, maxSize < 2 { throw ValidationError("--size must be at least 2") }
        if size != nil && maxSizeAlias != nil { throw ValidationError("--max-size is the old name of --size: give one") }
        guard Self.parseColour(background) != nil else { throw ValidationError("--background takes #RRGGBB") }
        if let shard, Self.parseShard(shard) == nil { throw ValidationError("--shard takes I/N with 0 <= I < N") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    static func parseColour(_ text: String) -> (UInt8, UInt8, UInt8)? {
        let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard hex.count == 6, let v = UInt32(hex, radix: 16) else { return nil }
        return (UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF))
    }

    static func parseShard(_ text: String) -> (index: Int, count: Int)? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n > 0, i >= 0, i < n else { return nil }
        return (i, n)
    }

    func run() throws {
        let colour = Self.parseColour(background)!
        if inputs.contains("-") || output == "-" {
            return try runStream(colour: colour)
        }
        // The output's extension picks the container (VP9 and AV1 go in MP4 or WebM); a directory gets MP4.
        let container = fileExtension(output).flatMap(VideoContainer.init(fileExtension:)) ?? .mp4
        let plan: ConversionPlan
        do {
            plan = try ConversionPlan.make(inputs: inputs, output: output, container: container,
                                           shard: shard.flatMap(Self.parseShard), keepSmaller: keepSmaller)
        } catch let error as FlipbookError {
            printError(failureLine(inputs[0], error))
            throw ExitCode(1)
        }
        try refuseOverwritingInputs(plan)
        for note in plan.notes { printError("flipbook: \(note)") }
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let workers = max(1, min(plan.jobs.count, jobs ?? cores))
        let options = conversionOptions(colour: colour, container: plan.container)
        let conversion = options
        let reportFile = try report.map { try ReportWriter(path: $0) }
        // A batch is a long run: keep its memory near what its largest file needs (see Allocator). So is one
        // remote file: it comes in bodies of up to 4 MiB, each freed in turn, and with glibc's moving threshold
        // they stay in the heap. A 27.5 MB GIF from S3 peaked 49 MB above the local file, 22 MB with this.
        let remote = plan.jobs.contains { job in
            [job.input, job.output].contains { if case .local? = try? StoreLocation($0) { false } else { true } }
        }
        if plan.jobs.count > 1 || remote { Allocator.keepLargeBlocksMapped() }
        let progress = ConversionProgress(total: plan.jobs.count)
        let failures = Atomic<Int>(0)
        let next = Atomic<Int>(0)
        let jobsList = plan.jobs
        let keep = keepSmaller
        let policy = sources.policy
        let work: @Sendable (Int) -> Void = { _ in
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < jobsList.count else { return }
                let job = jobsList[i]
                let started = monotonicMs()
                var line = ReportLine(input: job.input, output: job.output)
                do {
                    if job.upToDate {
                        line.status = "skipped"
                        line.note = job.keptEarlier ? "the GIF kept by --keep-smaller is up to date" : "output is newer than the input"
                    } else if job.output.hasPrefix("s3://"),
                              try ConversionPlan.isUpToDate(s3Output: job.output, sourceIdentity: job.sourceIdentity) {
                        line.status = "skipped"
                        line.note = "the output was made from this version of the input"
                    } else {
                        let source = try ConversionPlan.openSource(job.input, policy: policy)
                        line.inputBytes = source.count
                        let type = job.sniffLater ? MediaType.sniff(source) : .gif
                        if !FrameSources.accepts(type) {
                            let why = "not a GIF, animated WebP or APNG" + (type == .unknown ? "" : " (\(type))")
                            // Named on its own it fails, as a local file does; found under a prefix it is skipped.
                            if job.named { throw FlipbookError(type == .unknown ? .unknownFormat : .unsupported, why) }
                            line.status = "skipped"
                            line.note = why
                            reportFile?.append(line)
                            progress.step(line)
                            continue
                        }
                        let result = try GIFToVideo.convert(source, options: conversion)
                        line.frames = result.gifFrames
                        line.encodedFrames = result.encodedFrames
                        line.durationMs = result.durationMs
                        line.loopCount = result.loopCount
                        line.crf = result.crf
                        line.ssim = result.measuredSSIM
                        if keep && result.outputBytes >= source.count {
                            // The original, under its own extension: .gif, .webp or .png.
                            let gifCopy = ConversionPlan.keptCopy(of: job.output, input: job.input)
                            let kind = fileExtension(job.input)?.lowercased() == "gif" ? "GIF" : "original"
                            if sameFile(gifCopy, job.input) {
                                // The original already sits where its copy would go: nothing to write.
                                line.note = "the \(kind) is smaller than the video (\(result.outputBytes) bytes); kept where it is"
                            } else {
                                try source.withContiguousBytes {
                                    try writeAtomically(Array($0), to: gifCopy, protecting: [job.input], metadata: ["flipbook-source": job.sourceIdentity])
                                }
                                line.note = "the \(kind) is smaller than the video (\(result.outputBytes) bytes); copied to \(gifCopy)"
                            }
                            line.status = kind == "GIF" ? "kept-gif" : "kept-original"
                            line.output = gifCopy
                            line.outputBytes = source.count
                        } else {
                            // The poster first: an output that is there means its run finished (resume skips it).
                            if let poster = result.poster {
                                try writeAtomically(poster, to: job.output + ".jpg", protecting: [job.input])
                            }
                            try writeAtomically(result.data, to: job.output, protecting: [job.input],
                                                metadata: ["flipbook-source": job.sourceIdentity])
                            line.status = "converted"
                            line.outputBytes = result.outputBytes
                        }
                        if !result.warnings.isEmpty {
                            line.note = ([line.note].compactMap { $0 } + result.warnings).joined(separator: "; ")
                        }
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                    line.status = "failed"
                    line.error = ((error as? FlipbookError)?.code.rawValue ?? "error", describe(error))
                    printError(failureLine(job.input, error))
                }
                line.milliseconds = monotonicMs() - started
                if jobsList.count > 1 { Allocator.releaseFreeMemory() }
                reportFile?.append(line)
                progress.step(line)
            }
        }
        if workers == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: work) }
        progress.summary()
        if failures.load(ordering: .relaxed) > 0 { throw ExitCode(1) }
    }
}

extension Convert {
    /// The encoder settings every file of this run gets. The encoder's thread count is left to the converter,
    /// which fixes it per file from the frame size (never from --jobs or the machine), so outputs are
    /// byte-identical whatever the parallelism.
    func conversionOptions(colour: (UInt8, UInt8, UInt8), container: VideoContainer) -> VideoConversionOptions {
        var options = VideoConversionOptions()
        if let crf {  // as given, unless a floor is asked for too (then it is where the floor's search starts)
            options.crf = crf
            options.automaticFloor = false
            options.automaticTuning = false
        }
        options.minimumSSIM = minSsim
        options.targetSSIM = targetSsim
        options.x264Params = x264Params
        options.preset = preset
        options.maxSize = size ?? maxSizeAlias
        options.background = (colour.0, colour.1, colour.2)
        options.container = container
        // WebM cannot hold H.264: without --codec, a .webm output gets VP9.
        options.codec = codec ?? (container == .webm ? .vp9 : .h264)
        if poster { options.posterQuality = 85 }
        return options
    }

    /// Refuses, before anything is written, an output or report that would replace one of the inputs.
    func refuseOverwritingInputs(_ plan: ConversionPlan) throws {
        let sources = plan.jobs.map(\.input) + inputs.filter { !isDirectory($0) }
        if let report, let input = sources.first(where: { sameFile($0, report) }) {
            throw ValidationError("--report \(report) is the input \(input): refusing to overwrite it")
        }
        for job in plan.jobs where sameFile(job.output, job.input) {
            throw ValidationError("the output \(job.output) is the input: refusing to overwrite it")
        }
        if let report, plan.jobs.contains(where: { $0.output == report }) {
            throw ValidationError("--report \(report) is also an output")
        }
    }

    /// `-` as the input (stdin) and/or the output (stdout): one GIF, converted in memory.
    func runStream(colour: (UInt8, UInt8, UInt8)) throws {
        guard inputs.count == 1 else { throw ValidationError("`-` (stdin) takes one input") }
        if keepSmaller || shard != nil { throw ValidationError("--keep-smaller and --shard need files, not `-`") }
        let container = output == "-" ? VideoContainer.mp4 : fileExtension(output).flatMap(VideoContainer.init(fileExtension:)) ?? .mp4
        let options = conversionOptions(colour: colour, container: output == "-" && codec.map({ $0 == .vp9 || $0 == .av1 }) == true
                                        ? .webm : container)
        do {
            let source: any ByteSource = inputs[0] == "-" ? MemoryByteSource(try readAll(fd: 0)) : try FileByteSource(path: inputs[0])
            guard MediaType.sniff(source) == .gif else { throw FlipbookError(.unsupported, "\(inputs[0]) is not a GIF") }
            let result = try GIFToVideo.convert(source, options: options)
            if output == "-" {
                try writeAll(result.data, fd: 1)
            } else {
                try writeAtomically(result.data, to: output, protecting: inputs[0] == "-" ? [] : [inputs[0]])
                if let poster = result.poster { try writeAtomically(poster, to: output + ".jpg", protecting: []) }
            }
            for warning in result.warnings { printError("flipbook: \(inputs[0]): \(warning)") }
        } catch {
            printError(failureLine(inputs[0], error))
            throw ExitCode(1)
        }
    }
}

/// Whether two paths name the same existing file (device and inode).
func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat(), y = stat()
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
}

func monotonicMs() -> Int {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int(t.tv_sec) * 1000 + Int(t.tv_nsec) / 1_000_000
}

/// `path` with its file extension (if any) replaced by `ext`.
func replacingExtension(of path: String, with ext: String) -> String {
    guard let current = fileExtension(path) else { return path + "." + ext }
    return String(path.dropLast(current.count)) + ext
}

func parentDirectory(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
