import ArgumentParser
import Dispatch
import Foundation
import FlipbookWorker
import Logging
import PostgresNIO
import Synchronization

/// `flipbook queue`: look at and act on the job queue without psql. Every subcommand takes the worker's
/// `--database URL`, refuses a database without the schema (naming the migration command), and prints text
/// or, with `--json`, one JSON document.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Inspect and operate the PostgreSQL job queue: stats, list, retry, cancel, prune, and a page (ui).",
        subcommands: [QueueStats.self, QueueList.self, QueueRetry.self, QueueCancel.self, QueuePrune.self, QueueUICommand.self])
}

/// The options every `queue` subcommand has.
struct QueueOptions: ParsableArguments {
    @Option(help: "postgres://user[:password]@host[:port]/database, or postgres://user@/database?host=/socket/dir.") var database: String
    @Flag(help: "Print one JSON document instead of text.") var json = false

    /// Runs `body` with an admin over a pool of `database`, after checking the schema; exit 1 with the
    /// message on failure (64 for a bad URL).
    func run<T: Sendable>(_ body: @escaping @Sendable (QueueAdmin) async throws -> T) throws -> T {
        var logger = Logger(label: "flipbook.queue")
        logger.logLevel = .critical
        let client: PostgresClient
        do {
            client = PostgresClient(configuration: try DatabaseURL.configuration(database), backgroundLogger: logger)
        } catch {
            printError("flipbook queue: \(error)")
            throw ExitCode(64)
        }
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let admin = QueueAdmin(client: client, logger: logger)
        Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                let result: Result<T, any Error>
                do {
                    try await admin.checkSchema()
                    result = .success(try await body(admin))
                } catch {
                    result = .failure(error)
                }
                outcome.withLock { $0 = result }
                group.cancelAll()
            }
            done.signal()
        }
        done.wait()
        switch outcome.withLock({ $0 })! {
        case .success(let value): return value
        case .failure(let error):
            printError("flipbook queue: \(Self.describe(error))")
            throw ExitCode(1)
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "PostgreSQL: \(message)" }
            return "cannot reach PostgreSQL (\(error.code))"
        }
        return String(describing: error)
    }

    /// Prints `value` as sorted, pretty JSON with ISO 8601 dates.
    static func printJSON<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        printOut(String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self))
    }
}

/// A duration such as 7d, 12h, 30m or 0 (for ever), for the retention options.
func retentionSeconds(_ text: String, option: String) throws -> Double {
    if text == "0" { return 0 }
    guard let seconds = WorkerCommand.seconds(text) else { throw ValidationError("\(option) takes a duration such as 7d, 12h or 0 (keep for ever)") }
    return seconds
}

struct QueueStats: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats",
        abstract: "Counts by state and recipe, the oldest waiting job's age, jobs done and failed in the last minute and hour, running jobs by worker.")
    @OptionGroup var options: QueueOptions

    func run() throws {
        let stats = try options.run { try await $0.stats() }
        if options.json { return QueueOptions.printJSON(stats) }
        printOut(JobState.all.map { "\($0) \(stats.states[$0] ?? 0)" }.joined(separator: "  "))
        printOut("oldest available: " + (stats.oldestAvailableSeconds.map { String(format: "%.1f s", $0) } ?? "none"))
        printOut("last minute: done \(stats.lastMinute["done"] ?? 0), failed \(stats.lastMinute["failed"] ?? 0);"
                 + " last hour: done \(stats.lastHour["done"] ?? 0), failed \(stats.lastHour["failed"] ?? 0)")
        for recipe in stats.recipes.keys.sorted() {
            let counts = stats.recipes[recipe]!
            printOut("recipe \(recipe): " + JobState.all.compactMap { state in counts[state].map { "\(state) \($0)" } }.joined(separator: ", "))
        }
        for worker in stats.runningByWorker.keys.sorted() { printOut("running on \(worker): \(stats.runningByWorker[worker]!)") }
    }
}

struct QueueList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list",
        abstract: "Jobs in one state: id, source, recipe, attempts, error code and message, times.")
    @OptionGroup var options: QueueOptions
    @Option(help: "available, running, done, failed or cancelled.") var state = "failed"
    @Option(help: "Only jobs of this recipe.") var recipe: String?
    @Option(help: "Only jobs whose last error has this code (e.g. io, timeout, corrupt).") var code: String?
    @Option(help: "Most jobs to list.") var limit = 100

    func validate() throws {
        guard JobState.all.contains(state) else { throw ValidationError("--state: one of \(JobState.all.joined(separator: ", "))") }
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        let (state, recipe, code, limit) = (state, recipe, code, limit)
        let jobs = try options.run { try await $0.list(state: state, recipe: recipe, code: code, limit: limit) }
        if options.json { return QueueOptions.printJSON(jobs) }
        let time = ISO8601DateFormatter()
        for job in jobs {
            var line = "\(job.id)\t\(job.state)\t\(job.recipe)\t\(job.source)\tattempt \(job.attempts)/\(job.maxAttempts)"
            line += "\tcreated \(time.string(from: job.createdAt))"
            if let finished = job.finishedAt { line += "\tfinished \(time.string(from: finished))" }
            if let code = job.errorCode { line += "\t\(code): \(job.errorMessage ?? "")" }
            printOut(line)
        }
    }
}

struct QueueRetry: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "retry",
        abstract: "Back to available now, attempts reset (earlier errors kept in the job's history): the jobs named, or --failed ones.")
    @OptionGroup var options: QueueOptions
    @Argument(help: "Job ids (ended jobs: done, failed or cancelled).") var ids: [Int64] = []
    @Flag(help: "Every failed job (narrowed by --code and --recipe).") var failed = false
    @Option(help: "With --failed: only jobs whose last error has this code.") var code: String?
    @Option(help: "With --failed: only jobs of this recipe.") var recipe: String?

    func validate() throws {
        if ids.isEmpty == !failed { throw ValidationError("name job ids or --failed (not both)") }
        if !failed && (code != nil || recipe != nil) { throw ValidationError("--code and --recipe go with --failed") }
    }

    func run() throws {
        let (ids, failed, code, recipe) = (ids, failed, code, recipe)
        let moved = try options.run { admin in failed ? try await admin.retryFailed(code: code, recipe: recipe) : try await admin.retry(ids: ids) }
        if options.json { return QueueOptions.printJSON(["retried": moved]) }
        printOut("retried \(moved.count) job(s)" + (moved.isEmpty ? "" : ": " + moved.map(String.init).joined(separator: " ")))
        let missed = Set(ids).subtracting(moved)
        if !missed.isEmpty {
            printError("flipbook queue retry: not retried (no such job, or not ended): \(missed.sorted().map(String.init).joined(separator: " "))")
            throw ExitCode(1)
        }
    }
}

struct QueueCancel: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel",
        abstract: "Cancel the jobs named (available: never run; running: stopped within a lease renewal, nothing written), or --available ones.")
    @OptionGroup var options: QueueOptions
    @Argument(help: "Job ids (available or running).") var ids: [Int64] = []
    @Flag(help: "Every available job (narrowed by --recipe).") var available = false
    @Option(help: "With --available: only jobs of this recipe.") var recipe: String?

    func validate() throws {
        if ids.isEmpty == !available { throw ValidationError("name job ids or --available (not both)") }
        if !available && recipe != nil { throw ValidationError("--recipe goes with --available") }
    }

    func run() throws {
        let (ids, available, recipe) = (ids, available, recipe)
        let cancelled = try options.run { admin in available ? try await admin.cancelAvailable(recipe: recipe) : try await admin.cancel(ids: ids) }
        if options.json { return QueueOptions.printJSON(["cancelled": cancelled]) }
        printOut("cancelled \(cancelled.count) job(s)" + (cancelled.isEmpty ? "" : ": " + cancelled.map(String.init).joined(separator: " ")))
        let missed = Set(ids).subtracting(cancelled)
        if !missed.isEmpty {
            printError("flipbook queue cancel: not cancelled (no such job, or already ended): \(missed.sorted().map(String.init).joined(separator: " "))")
            throw ExitCode(1)
        }
    }
}

struct QueuePrune: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "prune",
        abstract: "Delete finished rows past their retention once, in batches (what workers do every minute).")
    @OptionGroup var options: QueueOptions
    @Option(help: "Keep done rows this long after they finished (0: for ever).") var keepDone = "7d"
    @Option(help: "Keep failed and cancelled rows this long after they finished (0: for ever).") var keepFailed = "30d"

    func validate() throws {
        _ = try retentionSeconds(keepDone, option: "--keep-done")
        _ = try retentionSeconds(keepFailed, option: "--keep-failed")
    }

    func run() throws {
        var retention = Retention()
        retention.keepDoneSeconds = try retentionSeconds(keepDone, option: "--keep-done")
        retention.keepFailedSeconds = try retentionSeconds(keepFailed, option: "--keep-failed")
        let outcome = try options.run { [retention] in try await $0.prune(retention) }
        if options.json {
            return QueueOptions.printJSON(PruneReport(deleted: outcome.deleted, batches: outcome.batches, seconds: outcome.seconds, skipped: outcome.skipped))
        }
        if outcome.skipped { return printOut("another session is pruning; nothing done") }
        let rate = outcome.seconds > 0 ? Double(outcome.total) / outcome.seconds : 0
        printOut("pruned \(outcome.total) row(s) (" + ["done", "failed", "cancelled"].map { "\($0) \(outcome.deleted[$0] ?? 0)" }.joined(separator: ", ")
                 + ") in \(outcome.batches) batch(es), \(String(format: "%.2f", outcome.seconds)) s, \(Int(rate)) rows/s")
    }

    struct PruneReport: Encodable {
        var deleted: [String: Int]
        var batches: Int
        var seconds: Double
        var skipped: Bool
    }
}
