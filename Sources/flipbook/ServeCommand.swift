import ArgumentParser
import Dispatch
import Foundation
import Flipbook
import FlipbookServer
import FlipbookStorage
import Logging
import Prometheus
#if canImport(Glibc)
import Glibc
#endif

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve derivatives of the files under ROOT over HTTP (MP4s, thumbnails, posters, previews, storyboards).",
        discussion: """
            URL API: GET|HEAD /mp4/<path>[?size=N], /thumb/<path>?size=N[&fit=inside|cover][&format=jpeg|webp|png], \
            /poster/<path>[?size=N], /preview/<path>[?size=N], /storyboard/<path>.vtt (and its sheets), \
            /original/<path>, /health, /metrics. Byte ranges and conditional requests follow RFC 9110. \
            ROOT may be an S3 prefix, s3://BUCKET/PREFIX/ (configured as the aws CLI is). With \
            --remote-sources (which needs --key and --salt), every media route also takes \
            ?url=<percent-encoded http(s) URL> instead of a path, in signed requests only, fetched through \
            the same guard and limits as every command's URL sources. \
            Sizes take B, KB, MB, GB (1024-based). SIGTERM or SIGINT: stop accepting, finish in-flight \
            requests (up to --grace seconds), exit 0.
            """)

    @Argument(help: "The folder to serve, or an S3 prefix (s3://BUCKET/PREFIX/); nothing outside it is ever read.") var root: String
    @Option(help: "Address to bind (default: loopback only).") var host = "127.0.0.1"
    @Option(help: "Port (0: any free port, printed at start).") var port = 8080
    @Option(help: "Memory cache limit, e.g. 256MB.") var memoryCache = "256MB"
    @Option(help: "Disk cache folder (default: none). Several servers may share one.") var diskCache: String?
    @Option(help: "Disk cache limit; trimmed to 70% when over, e.g. 10GB.") var diskCacheSize = "10GB"
    @Option(help: "With --disk-cache: derivatives of at least this size are sent from their cache file with sendfile, smaller ones from memory; 'off' never sends files.")
    var sendfileMin = "64KB"
    @Option(help: "Signing key, hex. With --salt, every request but /health and /metrics needs a valid sig.") var key: String?
    @Option(help: "Signing salt, hex.") var salt: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Option(help: "Decode/encode threads (default: the number of cores).") var workers: Int?
    @Option(help: "Jobs that may wait for a thread before requests get 503.") var queue = 64
    @Option(help: "Seconds a job may run before it is cancelled.") var jobTimeout = 60.0
    @Option(help: "Seconds in-flight requests get to finish after SIGTERM or SIGINT.") var grace = 10
    @Flag(help: "Also take ?url=<http(s) URL> instead of a path on every media route, in signed requests only (needs --key and --salt).")
    var remoteSources = false
    @OptionGroup var sources: SourceOptions

    func validate() throws {
        guard Self.parseSize(memoryCache) != nil else { throw ValidationError("--memory-cache takes a size such as 256MB") }
        guard Self.parseSize(diskCacheSize) != nil else { throw ValidationError("--disk-cache-size takes a size such as 10GB") }
        guard sendfileMin == "off" || Self.parseSize(sendfileMin) != nil else { throw ValidationError("--sendfile-min takes a size such as 16KB, or off") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: trace, debug, info, notice, warning, error or critical") }
        if (key == nil) != (salt == nil) { throw ValidationError("--key and --salt go together") }
        if remoteSources, key == nil || salt == nil {
            throw ValidationError("--remote-sources needs --key and --salt: URLs are fetched only for signed requests, or anyone could make this server fetch from inside its network")
        }
        if let key, let salt, URLSigner(keyHex: key, saltHex: salt) == nil { throw ValidationError("--key and --salt must be hex (the key not empty)") }
        if let workers, workers < 1 { throw ValidationError("--workers must be at least 1") }
        guard queue >= 0 else { throw ValidationError("--queue must be 0 or more") }
        guard jobTimeout > 0 else { throw ValidationError("--job-timeout must be positive") }
    }

    /// "256MB" -> bytes (K, M, G are 1024-based; a bare number is bytes).
    static func parseSize(_ text: String) -> Int? {
        var upper = text.uppercased()
        if upper.hasSuffix("IB") { upper = String(upper.dropLast(2)) + "B" }
        let units: [(String, Int)] = [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]
        for (suffix, scale) in units where upper.hasSuffix(suffix) {
            guard let n = Int(upper.dropLast(suffix.count)), n >= 0 else { return nil }
            return n.multipliedReportingOverflow(by: scale).overflow ? nil : n * scale
        }
        return Int(upper).flatMap { $0 >= 0 ? $0 : nil }
    }

    func run() throws {
        let logger = bootstrapStderrLogging(levelName: logLevel, label: "flipbook.serve")
        var configuration = FlipbookHTTPServer.Configuration(root: root)
        do {
            if case .s3 = try StoreLocation(root) { configuration.service.s3Client = try S3Context.client() }
        } catch {
            printError("flipbook serve: \(describe(error))")
            throw ExitCode(64)
        }
        if remoteSources { configuration.service.remoteSources = sources.policy }
        configuration.host = host
        configuration.shutdownGraceSeconds = max(0, grace)
        configuration.port = port
        configuration.service.memoryCacheBytes = Self.parseSize(memoryCache)!
        configuration.service.diskCacheDirectory = diskCache
        configuration.service.diskCacheBytes = Self.parseSize(diskCacheSize)!
        configuration.service.sendfileMinimumBytes = sendfileMin == "off" ? .max : Self.parseSize(sendfileMin)!
        if let workers { configuration.service.workers = workers }
        configuration.service.queueLimit = queue
        configuration.service.jobTimeoutSeconds = jobTimeout
        if let key, let salt { configuration.signer = URLSigner(keyHex: key, saltHex: salt) }
        if configuration.signer == nil && !Self.isLoopback(host) {
            printError("flipbook serve: warning: binding \(host) (not loopback) without --key: anyone who can reach it can make the server work")
        }
        let export: TraceExport?
        do {
            export = try TraceExport.start(serviceName: "flipbook-serve", environment: ProcessInfo.processInfo.environment, logger: logger)
        } catch {
            printError("flipbook serve: trace export: \(error)")
            throw ExitCode(64)
        }
        configuration.tracer = export?.tracer
        let server: FlipbookHTTPServer
        do {
            server = try FlipbookHTTPServer(configuration: configuration, logger: logger)
        } catch {
            printError("flipbook serve: \(describe(error))")
            throw ExitCode(1)
        }
        server.metrics.registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "flipbook", metricName: "build", unitName: "info",
            helpText: "Flipbook's version and the C libraries' (always 1)"), labels: BuildInfo.labels()).set(1.0 as Double)
        let failed = SendableBox()
        let done = DispatchSemaphore(value: 0)
        let bound = host
        Task {
            do {
                try await server.run { port in
                    printError("flipbook serve: listening on http://\(bound.contains(":") ? "[\(bound)]" : bound):\(port)/")
                }
            } catch {
                printError("flipbook serve: \(error)")
                failed.set()
            }
            await export?.finish()
            done.signal()
        }
        done.wait()
        if failed.isSet { throw ExitCode(1) }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// A flag set from a task and read after it has finished (the semaphore orders the two).
private final class SendableBox: @unchecked Sendable {
    private(set) var isSet = false
    func set() { isSet = true }
}
