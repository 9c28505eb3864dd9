import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The SQL of the queue: claim, renew, finish, retry, reap, give back. Every write to a running job is
/// fenced by `worker` and `attempts`, so a worker whose lease ran out (and whose job another worker now
/// holds) can no longer change the row.
struct JobQueue: Sendable {
    let client: PostgresClient
    let worker: String
    let logger: Logger
    /// How long to wait for any one statement before retrying it.
    let deadline: Deadline
    /// The claim loop's and the completions writer's own connections (`Session`); nil: they use the pool.
    let claims: Session?
    let finishes: Session?
    /// The sessions' event loop (or any of the pool's).
    let eventLoop: any EventLoop

    init(client: PostgresClient, connection: PostgresConnection.Configuration? = nil, worker: String, logger: Logger,
         timeout: Double = 10) {
        self.client = client
        self.worker = worker
        self.logger = logger
        deadline = Deadline(seconds: timeout)
        let eventLoop = PostgresConnection.defaultEventLoopGroup.any()
        self.eventLoop = eventLoop
        claims = connection.map { Session(configuration: $0, eventLoop: eventLoop, logger: logger) }
        finishes = connection.map { Session(configuration: $0, eventLoop: eventLoop, logger: logger) }
    }

    /// Runs `query` (on `session`'s connection, or one from the pool) and collects its rows, or throws
    /// `QueryTimeout` after the deadline's seconds; a session's connection is then closed.
    private func rows(_ query: PostgresQuery, on session: Session? = nil) async throws -> [PostgresRow] {
        guard let session else {
            return try await deadline.run { [client, logger] in try await client.query(query, logger: logger).collect() }
        }
        return try await session.rows(query, deadline: deadline)
    }

    /// Closes the sessions' connections (the worker has stopped).
    func close() {
        claims?.reset()
        finishes?.reset()
    }

    /// Up to `limit` available jobs, highest priority first, then oldest; each becomes `running` under this
    /// worker with `lease` seconds of lease and its attempt counted. SKIP LOCKED: concurrent claimers never
    /// wait for each other or take the same row.
    func claim(limit: Int, lease: Double) async throws -> [Job] {
        let rows = try await rows("""
            WITH next AS (
                SELECT id FROM flipbook.jobs
                WHERE state = 'available' AND run_after <= now()
                ORDER BY priority DESC, created_at, id
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED)
            UPDATE flipbook.jobs AS j
            SET state = 'running', attempts = j.attempts + 1, worker = \(worker),
                started_at = now(), lease_until = now() + make_interval(secs => \(lease))
            FROM next WHERE j.id = next.id
            RETURNING j.id, j.source, j.recipe, j.attempts::int8, j.max_attempts::int8
            """, on: claims)
        var jobs: [Job] = []
        for row in rows {
            let (id, source, recipe, attempt, maxAttempts) = try row.decode((Int64, String, String, Int, Int).self)
            jobs.append(Job(id: id, source: source, recipe: recipe, attempt: attempt, maxAttempts: maxAttempts))
        }
        return jobs.sorted { $0.id < $1.id }
    }

    /// Extends the leases of `ids`, the jobs this worker knows it holds; returns how many rows it renewed.
    /// Never "every running job with this worker's name": a claim whose reply was lost (PostgreSQL restarted
    /// between its commit and the answer) leaves a job marked with our name that no thread will ever run,
    /// and renewing it by name kept it `running` forever. The claim loop hands such jobs back
    /// (`giveBackUnheld`); if that fails too, their leases expire and they are reaped.
    func renew(_ ids: [Int64], lease: Double) async throws -> Int {
        if ids.isEmpty { return 0 }
        return try await rows("""
            UPDATE flipbook.jobs SET lease_until = now() + make_interval(secs => \(lease))
            WHERE id = ANY(\(ids)) AND worker = \(worker) AND state = 'running' RETURNING id
            """).count
    }

    /// Records the results of several jobs in one statement (what `Completions` batches); returns the ids it
    /// recorded. A job missing from the answer is no longer this worker's (its lease expired meanwhile).
    func finish(_ batch: [(job: Job, result: String)]) async throws -> Set<Int64> {
        if batch.isEmpty { return [] }
        let ids = batch.map(\.job.id), attempts = batch.map { Int64($0.job.attempt) }, results = batch.map(\.result)
        let rows = try await rows("""
            UPDATE flipbook.jobs AS j
            SET state = 'done', result = v.result::jsonb, error = NULL, finished_at = now(), lease_until = NULL
            FROM unnest(\(ids)::int8[], \(attempts)::int8[], \(results)::text[]) AS v(id, attempt, result)
            WHERE j.id = v.id AND j.worker = \(worker) AND j.attempts = v.attempt AND j.state = 'running'
            RETURNING j.id
            """, on: finishes)
        return Set(try rows.map { try $0.decode(Int64.self) })
    }

    /// Records a failure: `failed` if permanent or out of attempts, else `available` again after `delay`
    /// seconds. Returns the new state, or nil if the job is no longer this worker's.
    func fail(_ job: Job, code: String, message: String, permanent: Bool, delay: Double) async throws -> String? {
        let error = Self.errorJSON(code: code, message: message, attempt: job.attempt)
        let rows = try await rows("""
            UPDATE flipbook.jobs
            SET state = CASE WHEN \(permanent) OR attempts >= max_attempts THEN 'failed' ELSE 'available' END,
                finished_at = CASE WHEN \(permanent) OR attempts >= max_attempts THEN now() END,
                run_after = now() + make_interval(secs => \(delay)),
                error = \(error)::jsonb, lease_until = NULL
            WHERE id = \(job.id) AND worker = \(worker) AND attempts = \(job.attempt) AND state = 'running'
            RETURNING state
            """)
        return try rows.first?.decode(String.self)
    }

    /// Hands held jobs back (unstarted ones, or running ones at shutdown past `--grace`): `available` at once,
    /// the attempt not counted, and idle workers woken. Returns how many were still this worker's.
    @discardableResult
    func giveBack(_ jobs: [Job]) async throws -> Int {
        if jobs.isEmpty { return 0 }
        let ids = jobs.map(\.id), attempts = jobs.map { Int64($0.attempt) }
        let rows = try await rows("""
            WITH back AS (
                UPDATE flipbook.jobs AS j
                SET state = 'available', attempts = j.attempts - 1, lease_until = NULL, run_after = now()
                FROM unnest(\(ids)::int8[], \(attempts)::int8[]) AS v(id, attempt)
                WHERE j.id = v.id AND j.worker = \(worker) AND j.attempts = v.attempt AND j.state = 'running'
                RETURNING j.id)
            SELECT count(*)::int8 FROM back, (SELECT pg_notify('flipbook_jobs', '')) AS wake
            """)
        return try rows.first?.decode(Int.self) ?? 0
    }

    /// Hands back the jobs marked `running` under this worker's name that it does not hold (`held`): rows a
    /// claim took whose answer never arrived (PostgreSQL restarted between the claim's commit and its reply).
    /// As `giveBack`: `available` at once, the attempt not counted, idle workers woken. Before this, they waited
    /// for their lease to run out and were reaped, their attempt counted: a whole claim of up to 128 jobs.
    /// Only the claim loop calls it, between claims, so no claim of this worker is in flight.
    func giveBackUnheld(_ held: [Int64]) async throws -> Int {
        let rows = try await rows("""
            WITH back AS (
                UPDATE flipbook.jobs
                SET state = 'available', attempts = attempts - 1, lease_until = NULL, run_after = now()
                WHERE worker = \(worker) AND state = 'running' AND NOT (id = ANY(\(held)::int8[]))
                RETURNING id)
            SELECT count(*)::int8 FROM back, (SELECT pg_notify('flipbook_jobs', '')) AS wake
            """, on: claims)
        return try rows.first?.decode(Int.self) ?? 0
    }

    /// Jobs whose lease ran out (their worker vanished) go back to `available`, their attempt counted, or end
    /// `failed` if that was the last one. Any worker may run this; returns how many it reaped. Like
    /// `giveBack`, it wakes idle workers (and those that found the queue drained) in the same statement, at
    /// its commit: PostgreSQL delivers the identical NOTIFYs of one transaction once.
    func reapExpired() async throws -> Int {
        return try await rows("""
            WITH reaped AS (
                UPDATE flipbook.jobs
                SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
                    finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
                    error = jsonb_build_object('code', 'lease-expired', 'attempt', attempts,
                        'message', 'the worker running it (' || coalesce(worker, '?') || ') stopped renewing its lease'),
                    lease_until = NULL
                WHERE state = 'running' AND lease_until < now()
                RETURNING id)
            SELECT id, pg_notify('flipbook_jobs', '') FROM reaped
            """).count
    }

    /// Row counts by state (for the metrics).
    func countsByState() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await rows("SELECT state, count(*)::int8 FROM flipbook.jobs GROUP BY state") {
            let (state, count) = try row.decode((String, Int).self)
            counts[state] = count
        }
        return counts
    }

    static func errorJSON(code: String, message: String, attempt: Int) -> String {
        let object: [String: Any] = ["code": code, "message": message, "attempt": attempt]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
