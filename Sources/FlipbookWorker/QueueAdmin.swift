import Foundation
import Logging
import PostgresNIO

/// What an operator does to the queue, in the SQL `flipbook queue` and its page share: counts, lists, one
/// job's detail, retry, cancel and prune. Every read is a few statements over indexes (`jobs_claim`,
/// `jobs_lease`, `jobs_finished`) or one grouped count of the table, whatever its size, and every write one
/// statement. Over `client`, whose `run()` must be running.
public struct QueueAdmin: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Throws `QueueAdminError.schema` (with the migration command to run) unless the database has schema
    /// `flipbook` at this build's version.
    public func checkSchema() async throws {
        let version = try await client.withConnection { [logger] in try await Migrations.currentVersion(connection: $0, logger: logger) }
        if version < Migrations.latestVersion { throw QueueAdminError.schema(Migrations.upgradeAdvice(version: version)) }
    }

    /// The queue at a glance.
    public struct Stats: Sendable, Codable, Equatable {
        /// Rows by state (every state present, 0 where none).
        public var states: [String: Int]
        /// Rows by recipe, then state.
        public var recipes: [String: [String: Int]]
        /// Seconds the oldest `available` job has waited since it was enqueued (nil: none waits).
        public var oldestAvailableSeconds: Double?
        /// Jobs that ended `done` and `failed` in the last minute and the last hour.
        public var lastMinute: [String: Int]
        public var lastHour: [String: Int]
        /// Running jobs by worker name.
        public var runningByWorker: [String: Int]
    }

    public func stats() async throws -> Stats {
        var stats = Stats(states: Dictionary(uniqueKeysWithValues: JobState.all.map { ($0, 0) }), recipes: [:],
                          oldestAvailableSeconds: nil, lastMinute: ["done": 0, "failed": 0], lastHour: ["done": 0, "failed": 0],
                          runningByWorker: [:])
        for row in try await query("SELECT recipe, state, count(*)::int8 FROM flipbook.jobs GROUP BY recipe, state") {
            let (recipe, state, count) = try row.decode((String, String, Int).self)
            stats.states[state, default: 0] += count
            stats.recipes[recipe, default: [:]][state] = count
        }
        for row in try await query("""
            SELECT extract(epoch FROM now() - min(created_at))::float8 FROM flipbook.jobs WHERE state = 'available'
            """) {
            stats.oldestAvailableSeconds = try row.decode(Double?.self)
        }
        for row in try await query("""
            SELECT state,
                   count(*) FILTER (WHERE finished_at > now() - interval '1 minute')::int8,
                   count(*)::int8
            FROM flipbook.jobs WHERE state IN ('done', 'failed') AND finished_at > now() - interval '1 hour'
            GROUP BY state
            """) {
            let (state, minute, hour) = try row.decode((String, Int, Int).self)
            stats.lastMinute[state] = minute
            stats.lastHour[state] = hour
        }
        for row in try await query("SELECT coalesce(worker, '?'), count(*)::int8 FROM flipbook.jobs WHERE state = 'running' GROUP BY 1") {
            let (worker, count) = try row.decode((String, Int).self)
            stats.runningByWorker[worker] = count
        }
        return stats
    }

    /// One row as `queue list` and the page show it.
    public struct JobSummary: Sendable, Codable, Equatable {
        public var id: Int64
        public var source: String
        public var recipe: String
        public var state: String
        public var priority: Int
        public var attempts: Int
        public var maxAttempts: Int
        /// The last error's code and message, if any.
        public var errorCode: String?
        public var errorMessage: String?
        public var createdAt: Date
        public var runAfter: Date
        public var startedAt: Date?
        public var finishedAt: Date?
        public var worker: String?
    }

    /// A job with everything the page's detail shows.
    public struct JobDetail: Sendable, Codable, Equatable {
        public var job: JobSummary
        /// The result JSON of a `done` job, as stored.
        public var result: String?
        /// Every attempt's error, oldest first (`{"code", "message", "attempt"}` objects as JSON).
        public var errors: [String]
        /// The app's `traceparent`, if it stored one.
        public var traceContext: String?
    }

    private static let summaryColumns = """
        id, source, recipe, state, priority::int8, attempts::int8, max_attempts::int8, error->>'code', error->>'message',
        created_at, run_after, started_at, finished_at, worker
        """

    private static func summary(_ row: PostgresRow) throws -> JobSummary {
        let (id, source, recipe, state, priority, attempts, maxAttempts, code, message, created, runAfter, started, finished, worker) =
            try row.decode((Int64, String, String, String, Int, Int, Int, String?, String?, Date, Date, Date?, Date?, String?).self)
        return JobSummary(id: id, source: source, recipe: recipe, state: state, priority: priority, attempts: attempts,
                          maxAttempts: maxAttempts, errorCode: code, errorMessage: message, createdAt: created, runAfter: runAfter,
                          startedAt: started, finishedAt: finished, worker: worker)
    }

    /// Up to `limit` jobs in `state`, optionally of one recipe and error code: finished states newest first
    /// (through `jobs_finished`), waiting ones in claim order.
    public func list(state: String, recipe: String? = nil, code: String? = nil, limit: Int = 100) async throws -> [JobSummary] {
        guard JobState.all.contains(state) else { throw QueueAdminError.invalid("no state \(state) (states: \(JobState.all.joined(separator: ", ")))") }
        let order = ["done", "failed", "cancelled"].contains(state) ? "finished_at DESC NULLS LAST, id DESC"
            : state == "available" ? "priority DESC, created_at, id" : "id"
        let query: PostgresQuery = """
            SELECT \(unescaped: Self.summaryColumns) FROM flipbook.jobs
            WHERE state = \(state) AND (\(recipe)::text IS NULL OR recipe = \(recipe))
              AND (\(code)::text IS NULL OR error->>'code' = \(code))
            ORDER BY \(unescaped: order) LIMIT \(Int64(max(0, limit)))
            """
        return try await self.query(query).map(Self.summary)
    }

    /// One job, or nil if there is no such row.
    public func job(id: Int64) async throws -> JobDetail? {
        let rows = try await query("""
            SELECT \(unescaped: Self.summaryColumns), result::text, errors::text, trace_context FROM flipbook.jobs WHERE id = \(id)
            """)
        guard let row = rows.first else { return nil }
        let summary = try Self.summary(row)
        let columns = row.makeRandomAccess()
        let result = try columns[14].decode(String?.self)
        let errorsText = try columns[15].decode(String.self)
        let trace = try columns[16].decode(String?.self)
        let errors = ((try? JSONSerialization.jsonObject(with: Data(errorsText.utf8))) as? [Any] ?? []).map { element -> String in
            let data = (try? JSONSerialization.data(withJSONObject: element, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        return JobDetail(job: summary, result: result, errors: errors, traceContext: trace)
    }

    /// Back to `available` at once with attempts reset (their history kept in `errors`): the jobs of `ids`
    /// that have ended (`done`, `failed`, `cancelled`). Wakes idle workers. Returns the ids moved.
    public func retry(ids: [Int64]) async throws -> [Int64] {
        try await query("""
            WITH moved AS (
                UPDATE flipbook.jobs SET \(unescaped: Self.retrySet)
                WHERE id = ANY(\(ids)::int8[]) AND state IN ('done', 'failed', 'cancelled') RETURNING id)
            SELECT id FROM moved, (SELECT pg_notify('flipbook_jobs', '')) AS wake ORDER BY id
            """).map { try $0.decode(Int64.self) }
    }

    /// As `retry(ids:)`, for every `failed` job, optionally of one error code and one recipe.
    public func retryFailed(code: String? = nil, recipe: String? = nil) async throws -> [Int64] {
        try await query("""
            WITH moved AS (
                UPDATE flipbook.jobs SET \(unescaped: Self.retrySet)
                WHERE state = 'failed' AND (\(code)::text IS NULL OR error->>'code' = \(code))
                  AND (\(recipe)::text IS NULL OR recipe = \(recipe))
                RETURNING id)
            SELECT id FROM moved, (SELECT pg_notify('flipbook_jobs', '')) AS wake ORDER BY id
            """).map { try $0.decode(Int64.self) }
    }

    private static let retrySet = """
        state = 'available', attempts = 0, run_after = now(), error = NULL, result = NULL, finished_at = NULL,
        started_at = NULL, claimed_at = NULL, lease_until = NULL, worker = NULL
        """

    /// `cancelled`: the jobs of `ids` that are `available` (they never run) or `running` (their worker stops
    /// them within a lease renewal, writing nothing). A held job no thread had started gets its attempt back.
    /// Returns the ids cancelled.
    public func cancel(ids: [Int64]) async throws -> [Int64] {
        try await query("""
            UPDATE flipbook.jobs SET \(unescaped: Self.cancelSet)
            WHERE id = ANY(\(ids)::int8[]) AND state IN ('available', 'running') RETURNING id
            """).map { try $0.decode(Int64.self) }.sorted()
    }

    /// Cancels every `available` job, optionally of one recipe.
    public func cancelAvailable(recipe: String? = nil) async throws -> [Int64] {
        try await query("""
            UPDATE flipbook.jobs SET \(unescaped: Self.cancelSet)
            WHERE state = 'available' AND (\(recipe)::text IS NULL OR recipe = \(recipe)) RETURNING id
            """).map { try $0.decode(Int64.self) }.sorted()
    }

    private static let cancelSet = """
        state = 'cancelled', finished_at = now(), lease_until = NULL,
        attempts = CASE WHEN state = 'running' AND started_at IS NULL THEN attempts - 1 ELSE attempts END
        """

    /// Runs the retention once (`Retention.prune`) over a connection of the pool.
    public func prune(_ retention: Retention) async throws -> Retention.Outcome {
        try await client.withConnection { [logger] in try await retention.prune(connection: $0, logger: logger) }
    }

    private func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await client.query(query, logger: logger).collect()
    }
}
