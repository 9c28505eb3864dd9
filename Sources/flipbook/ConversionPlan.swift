#if canImport(Glibc)
import Glibc
#endif
import Flipbook

/// Which files to convert, where each output goes, and which are already done. Pure file-system reads.
struct ConversionPlan {
    struct Job: Sendable {
        var input: String
        var output: String
        var upToDate: Bool
        var bytes: Int
        /// Up to date because an earlier --keep-smaller run copied the (smaller) GIF to the output tree.
        var keptEarlier = false
    }

    var jobs: [Job] = []
    var notes: [String] = []
    var container: VideoContainer

    /// FNV-1a, 64-bit: stable across runs, machines and Swift versions (unlike `Hasher`).
    static func stableHash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// Where --keep-smaller puts the GIF instead of the video `output`.
    /// Where `--keep-smaller` puts the original: the output's name with the input's own extension (.gif, .webp, .png).
    static func keptCopy(of output: String, input: String) -> String {
        replacingExtension(of: output, with: fileExtension(input)?.lowercased() ?? "gif")
    }

    static func make(inputs: [String], output: String, container: VideoContainer, shard: (index: Int, count: Int)?,
                     keepSmaller: Bool = false) throws -> ConversionPlan {
        var plan = ConversionPlan(container: container)
        let ext = container == .webm ? "webm" : "mp4"
        let single = inputs.count == 1 && !isDirectory(inputs[0]) && !isDirectory(output) && !output.hasSuffix("/")
        var candidates: [(input: String, relative: String)] = []
        for input in inputs {
            if isDirectory(input) {
                let root = input.hasSuffix("/") ? String(input.dropLast()) : input
                for file in walk(root).sorted() {
                    candidates.append((file, String(file.dropFirst(root.count + 1))))
                }
            } else {
                candidates.append((input, baseName(input)))
            }
        }
        for (input, relative) in candidates {
            if let shard, Int(stableHash(relative) % UInt64(shard.count)) != shard.index { continue }
            // One file named on its own is what the user asked for: not converting it is a failure (exit 1), not
            // a skip (it printed "skipped" and exited 0 with no output). In a folder or a list, others are
            // skipped with a note.
            let source: FileByteSource
            do {
                source = try FileByteSource(path: input)
            } catch {
                if single { throw error }
                plan.notes.append("\(input): cannot be read, skipped")
                continue
            }
            // GIFs, animated WebPs and APNGs; still WebP and PNG are not animations (sniffed from the bytes).
            let type = MediaType.sniff(source)
            guard FrameSources.accepts(type) else {
                if single {
                    throw FlipbookError(type == .unknown ? .unknownFormat : .unsupported,
                                        "not a GIF, animated WebP or APNG" + (type == .unknown ? "" : " (\(type))"))
                }
                if !isDirectoryEntryNoise(relative) { plan.notes.append("\(input): not a GIF, animated WebP or APNG, skipped") }
                continue
            }
            let target: String
            if single {
                target = output
            } else {
                let stemmed = animationExtensions.contains(fileExtension(relative)?.lowercased() ?? "")
                    ? String(relative.dropLast(fileExtension(relative)!.count + 1)) : relative
                target = "\(output.hasSuffix("/") ? String(output.dropLast()) : output)/\(stemmed).\(ext)"
            }
            var job = Job(input: input, output: target, upToDate: isNewer(target, than: input), bytes: source.count)
            if !job.upToDate && keepSmaller {
                // A GIF copied by an earlier --keep-smaller run is up to date while its source is unchanged
                // (same size, not newer than the copy). The GIF itself, kept where it is, never counts.
                let copy = keptCopy(of: target, input: input)
                var a = stat(), b = stat()
                if !sameFile(copy, input), stat(copy, &a) == 0, stat(input, &b) == 0, a.st_size == b.st_size,
                   isNewer(copy, than: input) {
                    job.upToDate = true
                    job.keptEarlier = true
                }
            }
            plan.jobs.append(job)
        }
        // Largest first: one big GIF started last would leave the other workers idle at the end.
        plan.jobs.sort { $0.bytes > $1.bytes }
        return plan
    }

    /// File extensions dropped from an animation's name to make its output's.
    static let animationExtensions: Set<String> = ["gif", "webp", "png", "apng"]

    private static func isDirectoryEntryNoise(_ name: String) -> Bool { baseName(name).hasPrefix(".") }

    static func walk(_ directory: String) -> [String] {
        var files: [String] = []
        for name in DirectoryNames.strings(directory) ?? [] {
            let path = "\(directory)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                files += walk(path)
            } else if (info.st_mode & S_IFMT) == S_IFREG {
                files.append(path)
            }
        }
        return files
    }

    static func isNewer(_ path: String, than other: String) -> Bool {
        var a = stat(), b = stat()
        guard stat(path, &a) == 0, stat(other, &b) == 0, a.st_size > 0 else { return false }
        return (a.st_mtim.tv_sec, a.st_mtim.tv_nsec) >= (b.st_mtim.tv_sec, b.st_mtim.tv_nsec)
    }
}
