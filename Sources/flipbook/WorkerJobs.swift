import Flipbook
import FlipbookIngest
import FlipbookWorker

/// What `flipbook worker` does with one claimed job: resolve its source under the root, run the recipe the
/// job names through `Ingester` (the same code and result as `flipbook ingest`), and turn the result into a
/// `JobOutcome`.
struct WorkerJobs: Sendable {
    let root: String
    let ingester: Ingester

    init(root: String, output: String, recipes: RecipeBook, concurrency: Int) {
        self.root = root
        var ingester = Ingester(outputRoot: output, recipes: recipes)
        ingester.encoderThreads = concurrency > 1 ? 1 : 0
        self.ingester = ingester
    }

    /// Codes no retry can change: the same bytes (or the same job row) fail the same way.
    static let permanentCodes: Set<String> = ["unknown-format", "unsupported", "corrupt", "truncated", "limit-exceeded", "invalid-argument"]

    func run(_ job: Job) -> JobOutcome {
        guard let path = resolve(job.source) else {
            return .failed(code: "invalid-argument", message: "source \(job.source) is not a path inside the root", permanent: true)
        }
        let result = ingester.ingest(path: path, source: job.source, recipe: job.recipe)
        Allocator.releaseFreeMemory()
        guard let error = result.error else { return .done(result: result.json()) }
        return .failed(code: error.code, message: error.message, permanent: Self.permanentCodes.contains(error.code))
    }

    /// `root/source`, or nil for an absolute source or one that climbs out with `..`.
    func resolve(_ source: String) -> String? {
        if source.isEmpty || source.hasPrefix("/") || source.contains("\0") { return nil }
        let parts = source.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains("..") { return nil }
        return root.hasSuffix("/") ? root + parts.joined(separator: "/") : root + "/" + parts.joined(separator: "/")
    }
}
