#if canImport(Glibc)
import Glibc
#endif
import Flipbook
import FlipbookStorage

/// Which files to convert, where each output goes, and which are already done. Pure file-system reads.
struct ConversionPlan {
    struct Job: Sendable {
        var input: String
        var output: String
        var upToDate: Bool
        var bytes: Int
        /// Up to date because an earlier --keep-smaller run copied the (smaller) GIF to the output tree.
        var keptEarlier = false
        /// The source's identity (an S3 ETag, a file's device:inode:size:mtime), recorded on outputs written to
        /// S3 so that a later run knows whether they are up to date.
        var sourceIdentity = ""
        /// Not sniffed yet (an object or a URL: sniffed when its job opens it, not with a request per key here).
        var sniffLater = false
        /// Named on its own by the user: not being an animation is then a failure, not a skip.
        var named = false
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
        var remote: [String: StoreEntry] = [:]
        for input in inputs {
            switch try StoreLocation(input) {
            case .s3(let bucket, let key) where key.isEmpty || key.hasSuffix("/"):
                // A prefix: one listing, then only the names an animation has (each is sniffed when it runs).
                let store = S3Store(client: try S3Context.client(), bucket: bucket, prefix: key)
                for entry in try store.list(includeHidden: false)
                where animationExtensions.contains(fileExtension(entry.relative)?.lowercased() ?? "") {
                    let location = store.location(entry.relative)
                    candidates.append((location, entry.relative))
                    remote[location] = entry
                }
            case .s3(let bucket, let key):
                let store = S3Store(client: try S3Context.client(), bucket: bucket, prefix: "")
                do {
                    remote[input] = try store.entry(key)
                } catch {
                    if single { throw error }
                    plan.notes.append("\(input): \(describe(error)), skipped")
                    continue
                }
                candidates.append((input, baseName(key)))
            case .http:
                remote[input] = StoreEntry(relative: baseName(input), size: 0, identity: input, modifiedNs: nil)
                candidates.append((input, baseName(input)))
            case .local where isDirectory(input):
                let root = input.hasSuffix("/") ? String(input.dropLast()) : input
                for file in walk(root).sorted() {
                    candidates.append((file, String(file.dropFirst(root.count + 1))))
                }
            case .local:
                candidates.append((input, baseName(input)))
            }
        }
        for (input, relative) in candidates {
            if let shard, Int(stableHash(relative) % UInt64(shard.count)) != shard.index { continue }
            if let entry = remote[input] {
                plan.jobs.append(remoteJob(input: input, relative: relative, entry: entry, output: output, single: single, ext: ext))
                continue
            }
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
            var info = stat()
            if stat(input, &info) == 0 { job.sourceIdentity = LocalStore.entry(of: relative, info).identity }
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

    /// The job for an S3 object or a URL. A local output is up to date when it is newer than the object; an S3
    /// output's state is known only from a HEAD, made when its job runs (`Convert`), not one per key here.
    static func remoteJob(input: String, relative: String, entry: StoreEntry, output: String, single: Bool, ext: String) -> Job {
        let target: String
        if single {
            target = output
        } else {
            let stemmed = animationExtensions.contains(fileExtension(relative)?.lowercased() ?? "")
                ? String(relative.dropLast(fileExtension(relative)!.count + 1)) : relative
            target = "\(output.hasSuffix("/") ? String(output.dropLast()) : output)/\(stemmed).\(ext)"
        }
        var upToDate = false
        var info = stat()
        if !target.hasPrefix("s3://"), let modified = entry.modifiedNs, stat(target, &info) == 0, info.st_size > 0 {
            upToDate = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec) >= modified
        }
        var job = Job(input: input, output: target, upToDate: upToDate, bytes: entry.size)
        job.sourceIdentity = entry.identity
        job.sniffLater = true
        job.named = single
        return job
    }

    /// Whether the S3 object `output` was made from a source of this identity (the `flipbook-source` metadata
    /// every output written to S3 carries). A missing object is not up to date; other errors are thrown.
    static func isUpToDate(s3Output output: String, sourceIdentity: String) throws -> Bool {
        guard case .s3(let bucket, let key) = try StoreLocation(output) else { return false }
        do {
            let info = try S3Context.client().head(S3Object(bucket: bucket, key: key))
            return info.size > 0 && info.metadata["flipbook-source"] == sourceIdentity
        } catch let error as FlipbookError where error.code == .notFound {
            return false
        }
    }

    /// The bytes of a job's input: a file, an object or a URL (through the fetch guard, within the input limit).
    static func openSource(_ input: String, policy: FetchPolicy) throws -> any ByteSource {
        switch try StoreLocation(input) {
        case .local(let path): return try FileByteSource(path: path)
        case .s3(let bucket, let key):
            // An animation is read whole: up to 4 MiB in the first GET (most GIFs), not 64 KiB and doublings.
            return try S3Context.client().open(S3Object(bucket: bucket, key: key), maxBytes: Limits().maxInputBytes, firstRead: 4 << 20)
        case .http(let url):
            var policy = policy
            policy.maxSourceBytes = min(policy.maxSourceBytes, Limits().maxInputBytes)
            return try RemoteSource.open(url, policy: policy)
        }
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
