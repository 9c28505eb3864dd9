import Flipbook
import FlipbookIngest
import FlipbookWorker
import Tracing
#if canImport(Glibc)
import Glibc
#endif

/// What `flipbook worker` does with one claimed job: resolve its source under the root, run the recipe the
/// job names through `Ingester` (the same code and result as `flipbook ingest`), and turn the result into a
/// `JobOutcome`.
struct WorkerJobs: Sendable {
    let root: String
    /// The root's real path (symlinks resolved), which every source must resolve inside.
    let realRoot: String
    let ingester: Ingester

    init(root: String, output: String, recipes: RecipeBook, concurrency: Int, tracer: (any Tracer)? = nil) {
        self.root = root
        realRoot = realPath(root) ?? root
        var ingester = Ingester(outputRoot: output, recipes: recipes)
        ingester.encoderThreads = concurrency > 1 ? 1 : 0
        ingester.tracer = tracer
        self.ingester = ingester
    }

    /// Codes no retry can change: the same bytes (or the same job row) fail the same way.
    static let permanentCodes: Set<String> = ["unknown-format", "unsupported", "corrupt", "truncated", "limit-exceeded", "invalid-argument"]

    /// Seconds each recipe of the book may run, for those that say (`QueueWorker.Configuration.recipeTimeouts`).
    static func timeouts(_ recipes: RecipeBook) -> [String: Double] {
        recipes.recipes.compactMapValues(\.timeoutSeconds)
    }

    func run(_ job: Job, _ control: JobControl) -> JobOutcome {
        let path: String
        switch resolve(job.source) {
        case .success(let resolved): path = resolved
        case .failure(let error): return .failed(code: error.code.rawValue, message: error.message, permanent: true)
        }
        let result = ingester.ingest(path: path, source: job.source, recipe: job.recipe, isCancelled: { control.isCancelled },
                                     trace: control.trace)
        Allocator.releaseFreeMemory()
        guard let error = result.error else { return .done(result: result.json()) }
        return .failed(code: error.code, message: error.message, permanent: Self.permanentCodes.contains(error.code))
    }

    /// `root/source` with serve's rule (`DerivativeService.resolve`): the text may not be absolute or climb out
    /// with `..`, and where the path exists, it must resolve (symlinks followed) to a regular file inside the
    /// root: a symlink in the root that points out of it is not read, nor a FIFO or a device. Else
    /// `.invalidArgument`. A path that does not exist yet resolves to itself, so its job fails `io` and is
    /// retried (an app may enqueue before its upload lands).
    func resolve(_ source: String) -> Result<String, FlipbookError> {
        let refused = FlipbookError(.invalidArgument, "source \(source) is not a path inside the root")
        if source.isEmpty || source.hasPrefix("/") || source.contains("\0") { return .failure(refused) }
        let parts = source.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains("..") { return .failure(refused) }
        let joined = root.hasSuffix("/") ? root + parts.joined(separator: "/") : root + "/" + parts.joined(separator: "/")
        var info = stat()
        guard lstat(joined, &info) == 0 else { return .success(joined) }
        guard let real = realPath(joined) else { return .success(joined) }
        guard real.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            return .failure(FlipbookError(.invalidArgument, "source \(source) leads out of the root (to \(real))"))
        }
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(FlipbookError(.invalidArgument, "source \(source) is not a regular file"))
        }
        return .success(real)
    }
}
