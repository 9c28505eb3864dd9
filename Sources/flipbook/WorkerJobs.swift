import Flipbook
import FlipbookIngest
import FlipbookStorage
import FlipbookWorker
import Tracing
#if canImport(Glibc)
import Glibc
#endif

/// What `flipbook worker` does with one claimed job: resolve its source (a name under the root, a local folder
/// or an S3 prefix; or a full `s3://` or `http(s)` URL), run the recipe the job names through `Ingester` (the
/// same code and result as `flipbook ingest`), and turn the result into a `JobOutcome`.
struct WorkerJobs: Sendable {
    let root: String
    /// The root's real path (symlinks resolved), which every local source must resolve inside; nil for an S3 root.
    let realRoot: String?
    let ingester: Ingester
    /// The fetch guard's rules for URL sources (`--allow-private-sources` and the limits).
    let policy: FetchPolicy

    init(root: String, output: any IngestOutput, recipes: RecipeBook, concurrency: Int, policy: FetchPolicy = FetchPolicy(),
         tracer: (any Tracer)? = nil) {
        self.root = root
        realRoot = root.hasPrefix("s3://") ? nil : (realPath(root) ?? root)
        var ingester = Ingester(output: output, recipes: recipes)
        ingester.encoderThreads = concurrency > 1 ? 1 : 0
        ingester.tracer = tracer
        self.ingester = ingester
        self.policy = policy
    }

    /// Codes no retry can change: the same bytes (or the same job row) fail the same way. A refused fetch, and
    /// a URL the origin answers 4xx for, are permanent too; 5xx, resets, timeouts, a missing or denied object
    /// (an upload not there yet, a policy being fixed) and a source that changed mid-read are retried.
    static let permanentCodes: Set<String> = ["unknown-format", "unsupported", "corrupt", "truncated", "limit-exceeded", "invalid-argument",
                                              "fetch-refused"]

    /// Whether a failure can never pass on a retry.
    static func isPermanent(code: String, httpStatus: Int?) -> Bool {
        if permanentCodes.contains(code) { return true }
        // A URL's 4xx (but 408 and 429): the same request gets the same answer.
        if code == "fetch-failed", let status = httpStatus, (400..<500).contains(status), status != 408, status != 429 { return true }
        return false
    }

    /// Seconds each recipe of the book may run, for those that say (`QueueWorker.Configuration.recipeTimeouts`).
    static func timeouts(_ recipes: RecipeBook) -> [String: Double] {
        recipes.recipes.compactMapValues(\.timeoutSeconds)
    }

    func run(_ job: Job, _ control: JobControl) -> JobOutcome {
        let location: String
        switch resolve(job.source) {
        case .success(let resolved): location = resolved
        case .failure(let error): return .failed(code: error.code.rawValue, message: error.message, permanent: true)
        }
        let result = ingester.ingest(opening: ingestOpener(location, policy: policy, limits: ingester.limits), source: job.source,
                                     recipe: job.recipe, isCancelled: { control.isCancelled }, trace: control.trace)
        Allocator.releaseFreeMemory()
        guard let error = result.error else { return .done(result: result.json()) }
        return .failed(code: error.code, message: error.message, permanent: Self.isPermanent(code: error.code, httpStatus: error.httpStatus))
    }

    /// Where a job's source is. A full `s3://` or `http(s)` URL is taken as it is (a URL is checked by the fetch
    /// guard when it is fetched). Otherwise it is a name under the root: for an S3 root, the key below its prefix
    /// (S3 keys are names, nothing climbs out of a prefix); for a folder, serve's rule (`DerivativeService.resolve`):
    /// the text may not be absolute or climb out with `..`, and where the path exists, it must resolve (symlinks
    /// followed) to a regular file inside the root: a symlink in the root that points out of it is not read, nor
    /// a FIFO or a device. Else `.invalidArgument`. A path that does not exist yet resolves to itself, so its job
    /// fails `io` and is retried (an app may enqueue before its upload lands).
    func resolve(_ source: String) -> Result<String, FlipbookError> {
        let refused = FlipbookError(.invalidArgument, "source \(source) is not a path inside the root")
        if source.hasPrefix("s3://") || source.hasPrefix("http://") || source.hasPrefix("https://") { return .success(source) }
        // Any other URL (file:, ftp:, gopher:, ...) is refused as a fetch, whatever the root: it is never a key.
        if let colon = source.firstIndex(of: ":"), source[colon...].hasPrefix("://"),
           source[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) {
            return .failure(FlipbookError(.fetchRefused, "\(source): only http, https and s3 sources are fetched"))
        }
        if source.isEmpty || source.contains("\0") { return .failure(refused) }
        if root.hasPrefix("s3://") {
            return .success((root.hasSuffix("/") ? root : root + "/") + source)
        }
        if source.hasPrefix("/") || source.contains("://") { return .failure(refused) }
        let parts = source.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains("..") { return .failure(refused) }
        let joined = root.hasSuffix("/") ? root + parts.joined(separator: "/") : root + "/" + parts.joined(separator: "/")
        var info = stat()
        guard lstat(joined, &info) == 0 else { return .success(joined) }
        guard let real = realPath(joined), let realRoot else { return .success(joined) }
        guard real.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            return .failure(FlipbookError(.invalidArgument, "source \(source) leads out of the root (to \(real))"))
        }
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(FlipbookError(.invalidArgument, "source \(source) is not a regular file"))
        }
        return .success(real)
    }
}
