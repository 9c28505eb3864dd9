import ArgumentParser
import Dispatch
import Foundation
import FlipbookCodecs
import FlipbookIngest
import FlipbookServer
import FlipbookStorage
import FlipbookWorker
import Hummingbird
import Logging
import PostgresNIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run ingest jobs from PostgreSQL (table flipbook.jobs), or create/upgrade that schema with --migrate.",
        discussion: """
            Apps enqueue with INSERT INTO flipbook.jobs (source) VALUES ('relative/path') in their own transaction. \
            SIGTERM or SIGINT: stop claiming, finish running jobs within --grace or give them back, exit 0. \
            See docs/ingest-worker.md for the table and its states.
            """)

    @Option(help: "postgres://user[:password]@host[:port]/database, or postgres://user@/database?host=/socket/dir.") var database: String
    @Flag(help: "Create or upgrade schema flipbook, then exit (safe from several machines at once).") var migrate = false
    @Option(help: "The folder or s3://BUCKET/PREFIX/ job sources are relative to (a job may also name a full s3:// or http(s) URL).") var root: String?
    @Option(name: .shortAndLong, help: "The folder or s3://BUCKET/PREFIX/ outputs go under.") var output: String?
    @OptionGroup var sources: SourceOptions
    @OptionGroup var outputOptions: OutputOptions
    @Option(help: "Jobs at once (default: the number of cores).") var concurrency: Int?
    @Option(help: "A JSON recipe file: its recipes join the built-in default and probe, which jobs pick by name (column recipe).") var recipe: String?
    @Option(help: "Seconds a claim holds without a heartbeat, e.g. 30 or 30s.") var lease = "30s"
    @Option(help: "Seconds running jobs get after SIGTERM before they are given back.") var grace = "30s"
    @Option(help: "Seconds between polls when no NOTIFY arrives.") var poll = "2s"
    @Option(help: "How long one job may run before it is stopped and recorded timeout (retried), e.g. 10m or 90s; a recipe file's \"timeout\" overrides it for its recipe.") var jobTimeout = "10m"
    @Option(help: "How long a job's work may go on past its timeout before it is taken for stuck: the worker then records it timeout, stops claiming, gives back what it holds and exits with status 70.") var stuckAfter = "1m"
    @Option(help: "Keep done rows this long after they finished, e.g. 7d or 12h (0: for ever); workers prune older ones every minute.") var keepDone = "7d"
    @Option(help: "Keep failed and cancelled rows this long after they finished (0: for ever).") var keepFailed = "30d"
    @Option(help: "Serve /health and /metrics on this loopback port (0: any, printed).") var metricsPort: Int?
    @Option(help: "Address for --metrics-port.") var metricsHost = "127.0.0.1"
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"

    /// "500ms", "30s", "10m", "1h", "2d" or a bare number of seconds; nil unless positive and finite.
    static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        let (number, scale) = units.first { text.hasSuffix($0.0) }.map { (String(text.dropLast($0.0.count)), $0.1) } ?? (text, 1)
        guard let value = Double(number), value > 0, value.isFinite else { return nil }
        return value * scale
    }

    func validate() throws {
        for (name, value) in [("--lease", lease), ("--grace", grace), ("--poll", poll), ("--job-timeout", jobTimeout), ("--stuck-after", stuckAfter)] where Self.seconds(value) == nil {
            throw ValidationError("\(name) takes seconds, e.g. 30s or 500ms")
        }
        _ = try retentionSeconds(keepDone, option: "--keep-done")
        _ = try retentionSeconds(keepFailed, option: "--keep-failed")
        if !migrate && (root == nil || output == nil) { throw ValidationError("--root and -o are needed unless --migrate") }
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: trace, debug, info, notice, warning, error or critical") }
    }

    func run() throws {
        let logger = bootstrapStderrLogging(levelName: logLevel, label: "flipbook.worker")
        let client: PostgresClient
        let connection: PostgresConnection.Configuration
        do {
            client = PostgresClient(configuration: try DatabaseURL.configuration(database), backgroundLogger: logger)
            connection = try DatabaseURL.connectionConfiguration(database)
        } catch {
            printError("flipbook worker: \(error)")
            throw ExitCode(64)
        }
        let failed = FailureFlag()
        let done = DispatchSemaphore(value: 0)
        if migrate {
            let logger = logger
            Task {
                do {
                    let applied = try await Migrations.migrate(configuration: connection, logger: logger)
                    printError("flipbook worker: schema flipbook at version \(Migrations.latestVersion)"
                               + (applied.isEmpty ? " (nothing to do)" : " (applied \(applied.map(String.init).joined(separator: ", ")))"))
                } catch {
                    printError("flipbook worker --migrate: \(String(reflecting: error))")
                    failed.set()
                }
                done.signal()
            }
            done.wait()
            if failed.isSet { throw ExitCode(1) }
            return
        }

        Allocator.keepLargeBlocksMapped()
        // libav now, not in the first video job: that job took 26 ms instead of 2, and a second thread that
        // needed libav meanwhile waited for it. Stills need no libav, so a worker without it still runs.
        do {
            try LibAVLibraries.load()
        } catch {
            logger.warning("\(describe(error)); jobs that need libav will fail")
        }
        var configuration = QueueWorker.Configuration()
        configuration.concurrency = concurrency ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        configuration.leaseSeconds = Self.seconds(lease)!
        configuration.graceSeconds = Self.seconds(grace)!
        configuration.pollSeconds = Self.seconds(poll)!
        configuration.jobTimeoutSeconds = Self.seconds(jobTimeout)!
        configuration.stuckSeconds = Self.seconds(stuckAfter)!
        configuration.retention.keepDoneSeconds = try retentionSeconds(keepDone, option: "--keep-done")
        configuration.retention.keepFailedSeconds = try retentionSeconds(keepFailed, option: "--keep-failed")
        let recipes: RecipeBook
        do {
            recipes = try recipe.map { try RecipeBook.load(path: $0) } ?? .builtIn
        } catch {
            printError("flipbook worker: --recipe: \(describe(error))")
            throw ExitCode(64)
        }
        configuration.recipeTimeouts = WorkerJobs.timeouts(recipes)
        // The schema first: a worker against a database its migration has not reached fails every claim.
        let version = Self.schemaVersion(connection, logger: logger)
        guard version >= Migrations.latestVersion else {
            printError("flipbook worker: " + (version < 0 ? "cannot read the schema version" : Migrations.upgradeAdvice(version: version)))
            throw ExitCode(1)
        }
        let export: TraceExport?
        do {
            export = try TraceExport.start(serviceName: "flipbook-worker", environment: ProcessInfo.processInfo.environment, logger: logger)
        } catch {
            printError("flipbook worker: trace export: \(error)")
            throw ExitCode(64)
        }
        configuration.tracer = export?.tracer
        let policy = sources.policy
        let jobs = try WorkerJobs(root: root!, output: ingestOutput(output!), recipes: recipes, concurrency: configuration.concurrency,
                                  policy: policy, tracer: export?.tracer)
        let worker = QueueWorker(client: client, connection: connection, configuration: configuration, logger: logger) { jobs.run($0, $1) }

        worker.metrics.recordBuildInfo(BuildInfo.labels())
        // SIGTERM and SIGINT stop claiming; the process exits 0 once running jobs are done or given back.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let signals = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { worker.stop() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }

        let metricsPort = metricsPort, metricsHost = metricsHost, log = logger, name = configuration.name, slots = configuration.concurrency
        Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                if let metricsPort {
                    group.addTask {
                        do {
                            try await WorkerHTTP.serve(worker: worker, host: metricsHost, port: metricsPort, logger: log,
                                                       fetches: policy.counters)
                        } catch {
                            printError("flipbook worker: metrics server: \(error)")
                        }
                    }
                }
                printError("flipbook worker: \(name) running \(slots) at once")
                await worker.run()
                await export?.finish()
                group.cancelAll()
            }
            done.signal()
        }
        done.wait()
        if worker.wedged {
            printError("flipbook worker: a job's work did not stop after its timeout; exiting so no other worker runs it beside this one")
            throw ExitCode(70)
        }
    }

    /// The database's schema version (0: none), read over a connection of its own that waits up to 60 s for
    /// the server; -1 if it cannot be read.
    static func schemaVersion(_ configuration: PostgresConnection.Configuration, logger: Logger) -> Int {
        let result = Mutex<Int>(-1)
        let done = DispatchSemaphore(value: 0)
        Task {
            defer { done.signal() }
            let start = ContinuousClock.now
            while start.duration(to: .now) < .seconds(60) {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                    defer { Task { try? await connection.close() } }
                    let version = try await Migrations.currentVersion(connection: connection, logger: logger)
                    result.withLock { $0 = version }
                    return
                } catch let error as PSQLError where error.code == .connectionError {
                    logger.warning("cannot reach PostgreSQL yet, trying again: \(String(reflecting: error))")
                    try? await Task.sleep(for: .seconds(1))
                } catch {
                    logger.error("reading the schema version: \(String(reflecting: error))")
                    return
                }
            }
        }
        done.wait()
        return result.withLock { $0 }
    }
}

/// `/health` and `/metrics` for a worker.
enum WorkerHTTP {
    /// Serves them until cancelled; `/metrics` also counts the jobs' URL fetches (`fetches`) and S3 requests
    /// (the process's S3 client, once a job has made it).
    static func serve(worker: QueueWorker, host: String, port: Int, logger: Logger, fetches: FetchCounters) async throws {
        let router = Router()
        let sources = SourceCounterExport(registry: worker.metrics.registry)
        router.get("health") { _, _ in "ok\n" }
        router.get("metrics") { _, _ in
            sources.update(fetch: fetches, s3: S3Context.existing?.counters)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: .init(byteBuffer: ByteBuffer(bytes: worker.metrics.exposition())))
        }
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)), onServerRunning: { channel in
            printError("flipbook worker: metrics on http://\(host):\(channel.localAddress?.port ?? port)/metrics")
        }, logger: logger)
        try await app.runService(gracefulShutdownSignals: [])
    }
}

/// A flag set from a task and read after it has finished (the semaphore orders the two).
private final class FailureFlag: @unchecked Sendable {
    private(set) var isSet = false
    func set() { isSet = true }
}
