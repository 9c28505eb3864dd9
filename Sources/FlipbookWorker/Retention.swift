import Logging
import PostgresNIO

/// How long finished rows stay in `flipbook.jobs`, and the pruning that enforces it: `done` rows after
/// `keepDoneSeconds`, `failed` and `cancelled` ones after `keepFailedSeconds` (0: keep for ever), deleted
/// oldest first in statements of at most `batchSize` rows, each its own transaction, by one session at a time
/// (a session advisory lock; a second pruner finds it taken and does nothing). A batch takes row locks only on
/// the finished rows it deletes, skipping any another session holds, so claims, which lock `available` rows,
/// never wait for it. Workers prune every `intervalSeconds`; `flipbook queue prune` runs it once.
public struct Retention: Sendable, Equatable {
    /// Seconds a `done` row is kept after it finished (default 7 days; 0: for ever).
    public var keepDoneSeconds = 7 * 86_400.0
    /// Seconds a `failed` or `cancelled` row is kept after it finished (default 30 days; 0: for ever).
    public var keepFailedSeconds = 30 * 86_400.0
    /// Most rows one DELETE removes.
    public var batchSize = 1_000
    /// Seconds between a worker's prunes.
    public var intervalSeconds = 60.0

    public init() {}

    /// The advisory lock only one pruner holds ("flipru").
    static let lockKey: Int64 = 0x666c_6970_7275

    /// Rows one prune deleted, by state, and how long its statements took.
    public struct Outcome: Sendable, Equatable {
        /// Rows deleted by state (`done`, `failed`, `cancelled`).
        public var deleted: [String: Int] = [:]
        /// DELETE statements run.
        public var batches = 0
        /// Seconds the whole prune took.
        public var seconds = 0.0
        /// Another session was pruning: this one did nothing.
        public var skipped = false

        public var total: Int { deleted.values.reduce(0, +) }
    }

    /// Prunes once over `connection`, until no row is due; `onBatch` hears each batch's rows by state (for
    /// metrics). Throws what PostgreSQL throws; the lock is released on every path.
    public func prune(connection: PostgresConnection, logger: Logger,
                      onBatch: @Sendable ([String: Int]) -> Void = { _ in }) async throws -> Outcome {
        var outcome = Outcome()
        if keepDoneSeconds <= 0 && keepFailedSeconds <= 0 { return outcome }
        let start = ContinuousClock.now
        let locked = try await connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey))", logger: logger).collect()
        guard try locked.first?.decode(Bool.self) == true else {
            outcome.skipped = true
            return outcome
        }
        do {
            for (states, keep) in [(["done"], keepDoneSeconds), (["failed", "cancelled"], keepFailedSeconds)] where keep > 0 {
                for state in states {
                    while true {
                        let rows = try await connection.query("""
                            WITH doomed AS (
                                SELECT id FROM flipbook.jobs
                                WHERE state = \(state) AND finished_at < now() - make_interval(secs => \(keep))
                                ORDER BY finished_at LIMIT \(batchSize)
                                FOR UPDATE SKIP LOCKED)
                            DELETE FROM flipbook.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING true
                            """, logger: logger).collect()
                        let count = rows.count
                        outcome.batches += 1
                        if count > 0 {
                            outcome.deleted[state, default: 0] += count
                            onBatch([state: count])
                        }
                        if count < batchSize { break }
                    }
                }
            }
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger).collect()
            throw error
        }
        _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger).collect()
        outcome.seconds = QueueWorker.seconds(ContinuousClock.now - start)
        return outcome
    }
}
