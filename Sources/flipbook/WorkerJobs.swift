import Flipbook
import FlipbookWorker

/// What `flipbook worker` does with one claimed job: resolve its source under the root, run its recipe,
/// and turn the result or the typed error into a `JobOutcome`.
struct WorkerJobs: Sendable {
    let root: String
    let output: String

    /// Codes no retry can change: the same bytes fail the same way.
    static let permanentCodes: Set<String> = ["unknown-format", "unsupported", "corrupt", "truncated", "limit-exceeded", "invalid-argument"]

    func run(_ job: Job) -> JobOutcome {
        guard let path = resolve(job.source) else {
            return .failed(code: "invalid-argument", message: "source \(job.source) is not a path inside the root", permanent: true)
        }
        switch job.recipe {
        case "probe":
            do {
                let info = try MediaInput(path: path).probe()
                return .done(result: info.jsonLine(file: job.source))
            } catch {
                return Self.outcome(error)
            }
        default:
            // The derivative recipes come with FlipbookIngest (issue 20's first half).
            return .failed(code: "unsupported", message: "recipe \(job.recipe) is not known to this worker (known: probe)", permanent: true)
        }
    }

    static func outcome(_ error: Error) -> JobOutcome {
        guard let typed = error as? FlipbookError else {
            return .failed(code: "error", message: String(describing: error), permanent: false)
        }
        return .failed(code: typed.code.rawValue, message: typed.description, permanent: permanentCodes.contains(typed.code.rawValue))
    }

    /// `root/source`, or nil for an absolute source or one that climbs out with `..`.
    func resolve(_ source: String) -> String? {
        if source.isEmpty || source.hasPrefix("/") || source.contains("\0") { return nil }
        let parts = source.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains("..") { return nil }
        return root.hasSuffix("/") ? root + parts.joined(separator: "/") : root + "/" + parts.joined(separator: "/")
    }
}
