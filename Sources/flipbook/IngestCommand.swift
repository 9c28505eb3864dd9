import ArgumentParser
import Dispatch
import Flipbook
import FlipbookIngest
import FlipbookStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct IngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Make each upload's derivatives, metadata and placeholders on this machine (no server, no database).",
        discussion: """
            Every source gets one JSON line: its type, size, duration, frames, ThumbHash and BlurHash, and the \
            derivatives its recipe makes, written under OUT at ab/cd/<sha256>/<name>.<ext> (identical uploads \
            share them; a source already done is not made again). The default recipe: still -> thumb (320 px \
            WebP), large (1280 px JPEG); animation -> video (looping silent MP4), poster (320 px JPEG); video \
            -> poster, preview (hover MP4), storyboard (WebVTT and sheets). Exit status 1 if any source failed. \
            See docs/ingest-worker.md for recipe files and the result's fields.
            """)

    @Argument(help: "Files, folders (recursed), s3://BUCKET/KEY objects, s3://BUCKET/PREFIX/ prefixes (listed) and http(s) URLs; - reads them from standard input, one a line.")
    var inputs: [String]
    @Option(name: .shortAndLong, help: "The folder or s3://BUCKET/PREFIX/ outputs go under.") var output: String
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions
    @Option(help: "A built-in recipe (default, probe) or a JSON recipe file.") var recipe = "default"
    @Option(help: "Sources at once (default: the number of cores).") var jobs: Int?
    @Option(help: "Write the JSON lines to this file (atomically, in input order) instead of standard output.") var manifest: String?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if inputs.isEmpty { throw ValidationError("name at least one file or folder, or - for a list on standard input") }
        // Here, not in run: ArgumentParser prints the subcommand's usage only for errors thrown from validate.
        _ = try Self.recipes(recipe)
        if let manifest, isDirectory(manifest) { throw ValidationError("--manifest \(manifest) is a folder") }
    }

    /// The recipe book and the recipe name `--recipe` means: a built-in name, or a file's default recipe.
    static func recipes(_ option: String) throws -> (book: RecipeBook, name: String?) {
        if RecipeBook.builtIn.recipes[option] != nil { return (.builtIn, option) }
        do {
            return (try RecipeBook.load(path: option), nil)
        } catch let error as FlipbookError where error.code == .io {
            throw ValidationError("--recipe \(option): neither a built-in recipe (default, probe) nor a readable file")
        } catch {
            throw ValidationError("--recipe: \(describe(error))")
        }
    }

    func run() throws {
        let (book, recipeName) = try Self.recipes(recipe)
        Allocator.keepLargeBlocksMapped()
        let destination = try ingestOutput(output)
        let sources = try gatherSources()
        if let manifest { try Self.checkManifest(manifest, sources: sources) }
        let workers = min(max(1, sources.count), jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        var ingester = Ingester(output: destination, recipes: book)
        let policy = self.sources.policy
        // Several sources at once: one encoder thread each, as `convert --jobs` does.
        ingester.encoderThreads = workers > 1 ? 1 : 0
        // Kept for --manifest (written in input order at the end); standard output gets each line at once.
        let lines = Mutex([String?](repeating: nil, count: manifest == nil ? 0 : sources.count))
        let failures = Atomic<Int>(0)
        let next = Atomic<Int>(0)
        let progress = Progress(total: sources.count)
        let toStdout = manifest == nil
        let work: @Sendable (Int) -> Void = { [ingester] _ in
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < sources.count else { return }
                let result = ingester.ingest(opening: ingestOpener(sources[i], policy: policy, limits: ingester.limits), source: sources[i],
                                             recipe: recipeName)
                Allocator.releaseFreeMemory()
                if result.failed {
                    failures.add(1, ordering: .relaxed)
                    if !toStdout { printError("flipbook: \(sources[i]): \(result.error!.message)") }
                }
                let line = result.json()
                lines.withLock { all in
                    // Printed as each finishes, under the lock so lines never interleave.
                    if toStdout { printOut(line) } else { all[i] = line }
                }
                progress.step(failed: result.failed)
            }
        }
        if workers <= 1 {
            work(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: workers, execute: work)
        }
        if let manifest {
            let text = lines.withLock { $0.compactMap { $0 }.map { $0 + "\n" }.joined() }
            try writeAtomically(Array(text.utf8), to: manifest, protecting: sources)
        }
        if failures.load(ordering: .relaxed) > 0 { throw ExitCode(1) }
    }

    /// Refuses, before any work, a manifest that could not be written at the end: the results of a whole
    /// batch used to be lost when its folder was missing (it is now made) or it named a folder (`validate`)
    /// or an input.
    static func checkManifest(_ path: String, sources: [String]) throws {
        if let source = sources.first(where: { sameFile($0, path) }) {
            throw ValidationError("--manifest \(path) is the input \(source): refusing to overwrite it")
        }
        try makeParentDirectory(of: path)
        let folder = parentDirectory(path)
        guard access(folder, W_OK) == 0 else {
            throw FlipbookError(.io, "cannot write the manifest \(path)", underlying: String(cString: strerror(errno)))
        }
    }

    /// The files to ingest: named files as given, folders recursed (hidden entries and the output folder
    /// skipped), `-` read from standard input. Named paths that do not exist are kept: their result says so.
    func gatherSources() throws -> [String] {
        var sources: [String] = []
        let outputReal = realPath(output)
        for input in inputs {
            if input.hasPrefix("s3://"), case .s3(let bucket, let key) = try StoreLocation(input), key.isEmpty || key.hasSuffix("/") {
                // A prefix: every object below it, hidden names left out, in key order.
                let store = S3Store(client: try S3Context.client(), bucket: bucket, prefix: key)
                sources += try store.list(includeHidden: false).map { store.location($0.relative) }
            } else if input == "-" {
                let text = String(decoding: try readAll(fd: 0), as: UTF8.self)
                sources += text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init).filter { !$0.isEmpty }
            } else if isDirectory(input) {
                let root = input.count > 1 && input.hasSuffix("/") ? String(input.dropLast()) : input
                // The walk follows no symlink below `root` (lstat), so a file's real path is the root's real
                // path and its relative path: no realpath call per file.
                let rootReal = realPath(root)
                sources += ConversionPlan.walk(root).filter { path in
                    let relative = path.dropFirst(root.count + 1)
                    if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { return false }
                    guard let outputReal, let rootReal else { return true }
                    return !(rootReal + "/" + relative).hasPrefix(outputReal + "/")
                }.sorted()
            } else {
                sources.append(input)
            }
        }
        return sources
    }
}
