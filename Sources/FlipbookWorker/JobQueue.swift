import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

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
    let renewals: Session?
    /// The renewals' connection generation that holds the liveness lock (0: none).
    let livenessHeld = Box()

    /// A value shared by the copies of this struct.
    final class Box: Sendable {
        private let value = Atomic<Int>(0)
        var current: Int { value.load(ordering: .relaxed) }
        func set(_ new: Int) { value.store(new, ordering: .relaxed) }
    }
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
        renewals = connection.map { Session(configuration: $0, eventLoop: eventLoop, logger: logger) }
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
        renewals?.reset()
    }

    /// Up to `limit` available jobs, highest priority first, then oldest; each becomes `running` under this
    /// worker with `lease` seconds of lease and its attempt counted. SKIP LOCKED: concurrent claimers never
    /// wait for each other or take the same row. The first `startNow` (by the same order) are marked started
    /// (`started_at`) in the same statement: they go to threads at once. The rest are held, and marked by
    /// `markStarted` when a thread takes them; until then a reaper does not count their attempt.
    /// Returned in the order to run them: highest priority first, then oldest.
    func claim(limit: Int, lease: Double, startNow: Int) async throws -> [(job: Job, started: Bool)] {
        let rows = try await rows("""
            WITH next AS (
                SELECT id, priority, created_at FROM flipbook.jobs
                WHERE state = 'available' AND run_after <= now()
                ORDER BY priority DESC, created_at, id
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED),
            ranked AS (SELECT id, row_number() OVER (ORDER BY priority DESC, created_at, id) AS rank FROM next)
            UPDATE flipbook.jobs AS j
            SET state = 'running', attempts = j.attempts + 1, worker = \(worker), claimed_at = now(),
                started_at = CASE WHEN r.rank <= \(startNow) THEN now() END,
                lease_until = now() + make_interval(secs => \(lease))
            FROM ranked AS r WHERE j.id = r.id
            RETURNING j.id, j.source, j.recipe, j.attempts::int8, j.max_attempts::int8, j.priority::int8, j.trace_context, r.rank,
                      extract(epoch FROM j.created_at)::float8
            """, on: claims)
        var jobs: [(job: Job, started: Bool, rank: Int64)] = []
        for row in rows {
            let (id, source, recipe, attempt, maxAttempts, priority, trace, rank, enqueued) =
                try row.decode((Int64, String, String, Int, Int, Int, String?, Int64, Double).self)
            var job = Job(id: id, source: source, recipe: recipe, attempt: attempt, maxAttempts: maxAttempts,
                          priority: priority, traceContext: trace)
            job.enqueuedAt = enqueued
            jobs.append((job, rank <= Int64(startNow), rank))
        }
        return jobs.sorted { $0.rank < $1.rank }.map { ($0.job, $0.started) }
    }

    /// Marks held jobs as started (a thread is taking them): from now on their attempt counts if this worker
    /// dies. Through the pool: it runs beside the claim loop's statements, and a session takes one caller at a
    /// time (about one of these per claim). Returns the keys still this worker's; the others were reaped or cancelled meanwhile and must not run.
    func markStarted(_ jobs: [Job]) async throws -> Set<JobKey> {
        if jobs.isEmpty { return [] }
        let ids = jobs.map(\.id), attempts = jobs.map { Int64($0.attempt) }
        let rows = try await rows("""
            UPDATE flipbook.jobs AS j SET started_at = now()
            FROM unnest(\(ids)::int8[], \(attempts)::int8[]) AS v(id, attempt)
            WHERE j.id = v.id AND j.worker = \(worker) AND j.attempts = v.attempt AND j.state = 'running'
            RETURNING j.id, j.attempts::int8
            """)
        return Set(try rows.map { row in
            let (id, attempt) = try row.decode((Int64, Int).self)
            return JobKey(id: id, attempt: attempt)
        })
    }

    /// What a renewal found: the held jobs whose lease it extended, and those an operator or the app cancelled.
    struct Renewal {
        var renewed: Set<JobKey>
        var cancelled: Set<JobKey>
    }

    /// Extends the leases of `keys`, the jobs this worker knows it holds (fenced by worker and attempt), on
    /// the renewals' own connection, and reports which of them were cancelled (`state = 'cancelled'`): a
    /// running job is stopped within one renewal. Never "every running job with this worker's name": a claim
    /// whose reply was lost (PostgreSQL restarted between its commit and the answer) leaves a job marked with
    /// our name that no thread will ever run, and renewing it by name kept it `running` forever. The claim
    /// loop hands such jobs back (`giveBackUnheld`); if that fails too, their leases expire and they are reaped.
    /// The new lease runs from when the row is written (`clock_timestamp()`), not from when the statement
    /// began (`now()`): a renewal that waited out a table lock would otherwise write a lease already over.
    func renew(_ keys: [JobKey], lease: Double) async throws -> Renewal {
        if keys.isEmpty { return Renewal(renewed: [], cancelled: []) }
        try await holdLiveness()
        let ids = keys.map(\.id), attempts = keys.map { Int64($0.attempt) }
        let rows = try await rows("""
            WITH held AS (SELECT * FROM unnest(\(ids)::int8[], \(attempts)::int8[]) AS v(id, attempt)),
            renewed AS (
                UPDATE flipbook.jobs AS j SET lease_until = clock_timestamp() + make_interval(secs => \(lease))
                FROM held AS v
                WHERE j.id = v.id AND j.worker = \(worker) AND j.attempts = v.attempt AND j.state = 'running'
                RETURNING j.id, j.attempts)
            SELECT id, attempts::int8, true FROM renewed
            UNION ALL
            SELECT j.id, j.attempts::int8, false FROM flipbook.jobs AS j JOIN held AS v ON j.id = v.id AND j.attempts = v.attempt
            WHERE j.worker = \(worker) AND j.state = 'cancelled'
            """, on: renewals)
        var renewal = Renewal(renewed: [], cancelled: [])
        for row in rows {
            let (id, attempt, renewed) = try row.decode((Int64, Int, Bool).self)
            if renewed { renewal.renewed.insert(JobKey(id: id, attempt: attempt)) } else { renewal.cancelled.insert(JobKey(id: id, attempt: attempt)) }
        }
        return renewal
    }

    /// Records the results of several jobs in one statement (what `Completions` batches); returns the ids it
    /// recorded. A job missing from the answer is no longer this worker's (its lease expired meanwhile, or it
    /// was cancelled).
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
                error = \(error)::jsonb, errors = errors || jsonb_build_array(\(error)::jsonb), lease_until = NULL
            WHERE id = \(job.id) AND worker = \(worker) AND attempts = \(job.attempt) AND state = 'running'
            RETURNING state
            """)
        return try rows.first?.decode(String.self)
    }

    /// A running job that was cancelled has stopped: its row (already `cancelled`) records where. Returns
    /// whether the row was still this attempt's.
    func noteCancelled(_ job: Job, message: String) async throws -> Bool {
        let error = Self.errorJSON(code: "cancelled", message: message, attempt: job.attempt)
        return try await !rows("""
            UPDATE flipbook.jobs
            SET error = \(error)::jsonb, errors = errors || jsonb_build_array(\(error)::jsonb),
                finished_at = coalesce(finished_at, now()), lease_until = NULL
            WHERE id = \(job.id) AND worker = \(worker) AND attempts = \(job.attempt) AND state = 'cancelled'
            RETURNING id
            """).isEmpty
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
                SET state = 'available', attempts = j.attempts - 1, lease_until = NULL, run_after = now(), started_at = NULL
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
                SET state = 'available', attempts = attempts - 1, lease_until = NULL, run_after = now(), started_at = NULL
                WHERE worker = \(worker) AND state = 'running' AND NOT (id = ANY(\(held)::int8[]))
                RETURNING id)
            SELECT count(*)::int8 FROM back, (SELECT pg_notify('flipbook_jobs', '')) AS wake
            """, on: claims)
        return try rows.first?.decode(Int.self) ?? 0
    }

    /// Jobs whose lease ran out and whose worker is gone go back to `available`. Only a started job's attempt
    /// counts (`started_at` set: it was on a thread, or about to be): it ends `failed` if that was the last. A
    /// held job no thread had taken goes back as it was claimed, its attempt not counted: a worker that dies
    /// (a poison file, say) no longer charges an attempt to the dozens of innocent jobs it held.
    ///
    /// "Gone": its liveness lock (`holdLiveness`) is free, so the session holding it has ended, or the lease
    /// ran out over five minutes ago (a process frozen with its connection open). A live worker whose
    /// renewals could not get through because the database was stalled or the table locked (`LOCK TABLE ...
    /// IN SHARE MODE` blocks every UPDATE for as long as it is held) is not reaped when the stall ends: the
    /// reaper's UPDATE is released at the same moment as its renewals, and before, whichever got to the row
    /// first won. Any worker may run this; returns how many it reaped. Like `giveBack`, it wakes idle workers in
    /// the same statement, at its commit: PostgreSQL delivers the identical NOTIFYs of one transaction once.
    func reapExpired() async throws -> Int {
        return try await rows("""
            WITH reaped AS (
                UPDATE flipbook.jobs
                SET state = CASE WHEN started_at IS NOT NULL AND attempts >= max_attempts THEN 'failed' ELSE 'available' END,
                    finished_at = CASE WHEN started_at IS NOT NULL AND attempts >= max_attempts THEN now() END,
                    attempts = CASE WHEN started_at IS NULL THEN attempts - 1 ELSE attempts END,
                    error = CASE WHEN started_at IS NULL THEN error ELSE jsonb_build_object('code', 'lease-expired',
                        'attempt', attempts, 'message',
                        'the worker running it (' || coalesce(worker, '?') || ') stopped renewing its lease') END,
                    errors = CASE WHEN started_at IS NULL THEN errors ELSE errors || jsonb_build_array(jsonb_build_object(
                        'code', 'lease-expired', 'attempt', attempts, 'message',
                        'the worker running it (' || coalesce(worker, '?') || ') stopped renewing its lease')) END,
                    lease_until = NULL, started_at = NULL
                WHERE state = 'running' AND lease_until < now()
                  AND CASE WHEN lease_until < now() - interval '5 minutes' THEN true
                           ELSE pg_try_advisory_xact_lock(\(Self.livenessKey), hashtext(coalesce(worker, ''))) END
                RETURNING id)
            SELECT id, pg_notify('flipbook_jobs', '') FROM reaped
            """).count
    }

    /// The first key of every worker's liveness lock; the second is `hashtext(worker name)`.
    static let livenessKey: Int32 = 0x666c_6970

    /// Takes this worker's liveness lock on the renewals' connection, if that connection does not hold it
    /// yet (a new connection, or a try that found it still held by the previous connection's backend): a
    /// session-level advisory lock that PostgreSQL frees when the session ends, however it ends. `reapExpired`
    /// reaps only jobs whose worker's lock is free. Costs one statement after each reconnect.
    func holdLiveness() async throws {
        guard let renewals else { return }
        let generation = renewals.generation
        if livenessHeld.current == generation && generation > 0 { return }
        let rows = try await rows("SELECT pg_try_advisory_lock(\(Self.livenessKey), hashtext(\(worker)))", on: renewals)
        let held = try rows.first?.decode(Bool.self) == true
        let now = renewals.generation
        livenessHeld.set(held ? now : 0)
        if !held { logger.info("liveness lock still held by this worker's previous connection; trying again at the next renewal") }
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

    /// Whether PostgreSQL answered `error` by refusing the statement (a value it rejects, a constraint, a
    /// trigger's exception): trying again would fail again. Connection errors and timeouts are not, and
    /// neither are the server errors a restart or a busy server sends while the statement itself is fine:
    /// SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57 (operator intervention:
    /// `57P01 admin_shutdown` reaches every session of a server being restarted), 58 (system error),
    /// and 40001/40P01 (serialization failure, deadlock), which PostgreSQL's own docs say to retry.
    static func isRejection(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        guard let state = error.serverInfo?[.sqlState] else { return true }
        return !isTransient(sqlState: state)
    }

    static func isTransient(sqlState state: String) -> Bool {
        ["08", "53", "57", "58"].contains(where: state.hasPrefix) || state == "40001" || state == "40P01"
    }

    /// The server's own message for a refusal (its SQLSTATE and text), else the error's description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError, let info = error.serverInfo {
            return [info[.sqlState], info[.message], info[.detail]].compactMap { $0 }.joined(separator: ": ")
        }
        return String(describing: error)
    }

    static func errorJSON(code: String, message: String, attempt: Int) -> String {
        let object: [String: Any] = ["code": code, "message": message, "attempt": attempt]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
