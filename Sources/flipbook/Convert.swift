import ArgumentParser
import Dispatch
import Flipbook
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension VideoCodec: ExpressibleByArgument {}

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert GIFs, animated WebPs and APNGs to looping, silent, timing-exact MP4 (or WebM).",
        discussion: """
            INPUT is files or directories (searched recursively; files that are not GIFs, animated WebPs or \
            APNGs, still WebP and PNG included, are skipped with a note). With one input file, -o may name the output file; otherwise -o is a directory that mirrors \
            the input tree. Outputs that are newer than their input are skipped, so an interrupted run can be \
            started again; every output is written to a temporary file and renamed into place.
            """)

    @Argument(help: "GIF, animated WebP or APNG files, or directories.") var inputs: [String]
    @Option(name: .shortAndLong, help: "Output file (one input) or directory.") var output: String
    @Option(help: "Constant rate factor (lower: better and bigger).") var crf = 23
    @Option(help: "Encoder preset (ultrafast ... veryslow).") var preset = "medium"
    @Option(help: "Scale the longer side down to at most N pixels.") var maxSize: Int?
    @Option(help: "Colour under transparent pixels, #RRGGBB.") var background = "#FFFFFF"
    @Option(help: "h264, hevc, vp9 or av1.") var codec: VideoCodec = .h264
    @Option(help: "Parallel conversions (default: the number of cores).") var jobs: Int?
    @Option(help: "Take only shard I of N (I from 0), by a stable hash of each file's path under its input root.")
    var shard: String?
    @Flag(help: "Keep the original (copied to the output tree) when the video would be larger.") var keepSmaller = false
    @Option(help: "Write a JSON-lines report here.") var report: String?
    @Flag(help: "Also write a JPEG poster (first frame) beside each video.") var poster = false

    func validate() throws {
        guard (0...63).contains(crf) else { throw ValidationError("--crf must be 0 to 63") }
        if let maxSize, maxSize < 2 { throw ValidationError("--max-size must be at least 2") }
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
        // The output's extension picks the container (VP9 and AV1 go in MP4 or WebM); a directory gets MP4.
        let container = fileExtension(output).flatMap(VideoContainer.init(fileExtension:)) ?? .mp4
        let plan = try ConversionPlan.make(inputs: inputs, output: output, container: container,
                                           shard: shard.flatMap(Self.parseShard))
        for note in plan.notes { printError("flipbook: \(note)") }
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let workers = max(1, min(plan.jobs.count, jobs ?? cores))
        var options = VideoConversionOptions()
        options.crf = crf
        options.preset = preset
        options.maxSize = maxSize
        options.background = (colour.0, colour.1, colour.2)
        options.codec = codec
        options.container = plan.container
        // libav's own threads fill the cores the workers leave: never more threads than cores in total.
        options.threads = max(1, cores / workers)
        if poster { options.posterQuality = 85 }

        let conversion = options
        let reportFile = try report.map { try ReportWriter(path: $0) }
        let progress = ConversionProgress(total: plan.jobs.count)
        let failures = Atomic<Int>(0)
        let next = Atomic<Int>(0)
        let jobsList = plan.jobs
        let keep = keepSmaller
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
                        line.note = "output is newer than the input"
                    } else {
                        try makeDirectory(parentDirectory(job.output))
                        let source = try FileByteSource(path: job.input)
                        line.inputBytes = source.count
                        let result = try GIFToVideo.convert(source, options: conversion)
                        line.frames = result.gifFrames
                        line.encodedFrames = result.encodedFrames
                        line.durationMs = result.durationMs
                        line.loopCount = result.loopCount
                        if keep && result.outputBytes >= source.count {
                            // The original, under its own extension: .gif, .webp or .png.
                            let originalExtension = fileExtension(job.input)?.lowercased() ?? "gif"
                            let gifCopy = replacingExtension(of: job.output, with: originalExtension)
                            try source.withContiguousBytes { try writeAtomically(Array($0), to: gifCopy, protecting: [job.input]) }
                            line.status = originalExtension == "gif" ? "kept-gif" : "kept-original"
                            line.output = gifCopy
                            line.outputBytes = source.count
                        } else {
                            try writeAtomically(result.data, to: job.output, protecting: [job.input])
                            if let poster = result.poster {
                                try writeAtomically(poster, to: job.output + ".jpg", protecting: [job.input])
                            }
                            line.status = "converted"
                            line.outputBytes = result.outputBytes
                        }
                        if !result.warnings.isEmpty { line.note = result.warnings.joined(separator: "; ") }
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                    line.status = "failed"
                    line.error = describe(error)
                    printError("flipbook: \(job.input): \(describe(error))")
                }
                line.milliseconds = monotonicMs() - started
                reportFile?.append(line)
                progress.step(line)
            }
        }
        if workers == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: work) }
        progress.summary()
        if failures.load(ordering: .relaxed) > 0 { throw ExitCode(1) }
    }
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
