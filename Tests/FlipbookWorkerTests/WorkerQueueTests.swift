import Foundation
import XCTest

/// `flipbook worker` end to end: a real PostgreSQL 15 (Debian's, started by Tests/worker/pgqueue.py in a
/// temporary folder as the `postgres` user), apps written with psycopg, worker processes of this build, and
/// ffprobe as the oracle. Each test is one scenario of Tests/worker/queue_tests.py; it waits on NOTIFY and
/// the table, never on a deadline. XCTest runs these synchronously on its own thread, off the cooperative pool.
final class WorkerQueueTests: XCTestCase {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var python: String {
        if let env = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], FileManager.default.isExecutableFile(atPath: env) { return env }
        return packageRoot.appendingPathComponent(".build/venv/bin/python3").path
    }

    func scenario(_ name: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/15/bin/initdb") else {
            throw XCTSkip("PostgreSQL 15 is not installed (make deps installs postgresql-15)")
        }
        let binary = Self.packageRoot.appendingPathComponent(".build/debug/flipbook").path
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: binary), "\(binary) missing: swift build first")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.packageRoot.appendingPathComponent("Tests/worker/queue_tests.py").path, binary, name]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(text)
        // 77: the scenario cannot run on this machine (it says why), as automake's tests say it.
        if process.terminationStatus == 77 { throw XCTSkip("scenario \(name): \(text.split(separator: "\n").last ?? "skipped")") }
        XCTAssertEqual(process.terminationStatus, 0, "scenario \(name) failed:\n\(text)")
        XCTAssertTrue(text.contains("\(name): ok"), text)
    }

    /// An app enqueues in its transaction and reads results back; a rolled-back transaction's jobs never run.
    func testAppEnqueuesInItsTransaction() throws { try scenario("app") }
    /// Many jobs, three workers: each done once (attempts 1); results match ffprobe.
    func testThreeWorkersRunEachJobOnce() throws { try scenario("many") }
    /// kill -9 of a worker holding jobs: another finishes them after the lease (attempts 2).
    func testKilledWorkersJobsAreFinishedByAnother() throws { try scenario("kill") }
    /// PostgreSQL restarted mid-run: all done, none twice.
    func testSurvivesDatabaseRestart() throws { try scenario("restart") }
    /// A claim whose answer PostgreSQL never sent: its rows go back at the next claim, attempt not counted.
    func testALostClaimsJobsGoBackUncounted() throws { try scenario("orphans") }
    /// Bombs, truncated, unknown: failed at attempt 1; a late source is retried to done.
    func testPermanentAndTransientFailures() throws {
        // Its broken and hostile files are the corpus's.
        let corpus = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] ?? Self.packageRoot.appendingPathComponent("../shared/corpus").path
        guard FileManager.default.fileExists(atPath: corpus + "/MANIFEST.tsv") else {
            throw XCTSkip("corpus not found at \(corpus) (set FLIPBOOK_CORPUS or put it at ../shared/corpus)")
        }
        try scenario("failures")
    }
    /// The default recipe and a recipe file's: results equal `flipbook ingest`'s; files, hashes and sizes by ffprobe.
    func testRecipesThroughTheQueueMatchLocalIngest() throws { try scenario("recipes") }
    /// Short jobs are claimed and recorded a batch at a time; a batch of slow ones is shared with an idle worker.
    func testShortJobsShareStatementsAndSlowOnesAreShared() throws { try scenario("batching") }

    func testMetricsAgreeWithTheTableAndADrainedQueueIsNotPolledPerJob() throws { try scenario("metrics") }

    /// The corpus's 8K clip, which the slow scenarios' recipe decodes for seconds.
    func requireCorpus() throws {
        let corpus = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] ?? Self.packageRoot.appendingPathComponent("../shared/corpus").path
        guard FileManager.default.fileExists(atPath: corpus + "/MANIFEST.tsv") else {
            throw XCTSkip("corpus not found at \(corpus) (set FLIPBOOK_CORPUS or put it at ../shared/corpus)")
        }
    }

    /// FIFOs fail at once (job, ingest, thumb); a symlink out of the root is refused; priority within a claim;
    /// a result PostgreSQL refuses fails only its job.
    func testInputsThatHangOrEscapeAndARefusedResult() throws { try scenario("strain") }
    /// --job-timeout 2s stops an 8K storyboard job (`timeout`, nothing written) and the slot takes the next job.
    func testAJobPastItsTimeoutIsStopped() throws {
        try requireCorpus()
        try scenario("timeout")
    }
    /// Work that does not stop after its timeout (its thread held in a read by ptrace): the job is recorded
    /// `timeout`, what the worker held goes back, and it exits 70.
    func testWorkThatDoesNotStopMakesTheWorkerExit70() throws {
        try requireCorpus()
        try scenario("wedged")
    }
    /// A running job cancelled stops within a renewal, writes nothing; a waiting one cancelled never starts.
    func testCancelledJobsStopOrNeverStart() throws {
        try requireCorpus()
        try scenario("cancel")
    }
    /// A table locked past three leases does not get a live worker's job reaped; nor does a heartbeat held in
    /// `pg_sleep` by a trigger, while the renewals, on their own connection, go on.
    func testALockedTableDoesNotReapLiveLeases() throws {
        try requireCorpus()
        try scenario("slowdb")
    }
    /// `flipbook queue` stats, list, retry and cancel against SQL; an app hears retried jobs end.
    func testQueueCommandsAgreeWithSQL() throws { try scenario("cli") }

    /// S3 as root and output (through an outage), jobs naming s3:// and http URLs, refused URLs (issues 43, 44).
    func testObjectStorageAndURLSourcesThroughTheQueue() throws { try scenario("s3") }
    /// 200,000 old rows pruned in batches while claims go on; the worker's own retention and its metric.
    func testRetentionPrunesWhileClaimsGoOn() throws { try scenario("retention") }
    /// The queue's page in headless Chromium: counts, escaping, Retry, CSRF and the access token.
    func testQueuePageInChromium() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else { throw XCTSkip("chromium is not installed (make deps installs it)") }
        try scenario("ui")
    }
    /// A job with the app's traceparent: one trace, its spans at a loopback OTLP/HTTP receiver (opentelemetry-proto).
    func testJobsContinueTheAppsTrace() throws { try scenario("traces") }
    /// A killed worker's claimed-but-unstarted jobs keep their attempt count.
    func testAKilledWorkersUnstartedJobsAreNotCharged() throws {
        try requireCorpus()
        try scenario("poison")
    }
}
