import ArgumentParser
import Dispatch
import Foundation
import FlipbookWorker
import Hummingbird
import Logging
import PostgresNIO
import Synchronization

/// `flipbook queue ui`: the queue's page on `--host`:`--port`, over the same SQL as the other `queue`
/// subcommands. A `--token` (or FLIPBOOK_QUEUE_TOKEN) is required when the host is not loopback, and checked
/// on every request whenever one is set.
struct QueueUICommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ui",
        abstract: "Serve a page of the queue: counts, failed jobs with their errors, a job's detail, Retry and Cancel.",
        discussion: """
            Open http://HOST:PORT/ (with a token: http://HOST:PORT/?token=TOKEN once; a cookie keeps it). Retry and \
            Cancel are POSTs carrying a per-session CSRF token. Scripts may send Authorization: Bearer TOKEN.
            """)

    @Option(help: "postgres://user[:password]@host[:port]/database, or postgres://user@/database?host=/socket/dir.") var database: String
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0: any free one, printed).") var port = 8090
    @Option(help: "Access token; required unless --host is loopback (default: FLIPBOOK_QUEUE_TOKEN).") var token: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "notice"

    var accessToken: String? { token ?? ProcessInfo.processInfo.environment["FLIPBOOK_QUEUE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 } }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    func validate() throws {
        if !Self.isLoopback(host) && accessToken == nil {
            throw ValidationError("--host \(host) is not loopback: give --token (or set FLIPBOOK_QUEUE_TOKEN)")
        }
        if let accessToken, accessToken.count < 16 { throw ValidationError("--token: at least 16 characters") }
        guard (0...65535).contains(port) else { throw ValidationError("--port: 0 to 65535") }
    }

    func run() throws {
        let logger = bootstrapStderrLogging(levelName: logLevel, label: "flipbook.queue.ui")
        let client: PostgresClient
        do {
            client = PostgresClient(configuration: try DatabaseURL.configuration(database), backgroundLogger: logger)
        } catch {
            printError("flipbook queue ui: \(error)")
            throw ExitCode(64)
        }
        let admin = QueueAdmin(client: client, logger: logger)
        let site = QueueSite(admin: admin, token: accessToken)
        let failed = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let (host, port) = (host, port)
        Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                do {
                    try await admin.checkSchema()
                    try await site.serve(host: host, port: port, logger: logger)
                } catch {
                    failed.withLock { $0 = QueueOptions.describe(error) }
                }
                group.cancelAll()
            }
            done.signal()
        }
        done.wait()
        if let message = failed.withLock({ $0 }) {
            printError("flipbook queue ui: \(message)")
            throw ExitCode(1)
        }
    }
}
