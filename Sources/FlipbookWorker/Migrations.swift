import Logging
import PostgresNIO

/// Schema `flipbook`, in numbered migrations. `migrate` applies the missing ones in order, each in its own
/// transaction, while holding a session advisory lock, so several machines may run it at once: the second
/// waits for the first and then finds nothing to do. Never edit a released migration; append one.
public enum Migrations {
    /// The advisory lock key ("flip" in ASCII).
    static let lockKey: Int64 = 0x666c_6970

    /// One statement per string (PostgresNIO's extended protocol takes one statement per query).
    static let steps: [(version: Int, statements: [String])] = [
        (1, [
            """
            CREATE TABLE flipbook.jobs (
                id           bigserial PRIMARY KEY,
                source       text NOT NULL,
                recipe       text NOT NULL DEFAULT 'default',
                state        text NOT NULL DEFAULT 'available'
                             CHECK (state IN ('available', 'running', 'done', 'failed', 'cancelled')),
                priority     integer NOT NULL DEFAULT 0,
                attempts     integer NOT NULL DEFAULT 0,
                max_attempts integer NOT NULL DEFAULT 5,
                run_after    timestamptz NOT NULL DEFAULT now(),
                result       jsonb,
                error        jsonb,
                created_at   timestamptz NOT NULL DEFAULT now(),
                started_at   timestamptz,
                finished_at  timestamptz,
                worker       text,
                lease_until  timestamptz
            )
            """,
            "CREATE INDEX jobs_claim ON flipbook.jobs (priority DESC, created_at, id) WHERE state = 'available'",
            "CREATE INDEX jobs_lease ON flipbook.jobs (lease_until) WHERE state = 'running'",
            // One wake-up per inserting statement, not per row: a bulk insert of 2,000 jobs sends one NOTIFY.
            """
            CREATE FUNCTION flipbook.notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('flipbook_jobs', ''); RETURN NULL; END $$
            """,
            """
            CREATE TRIGGER jobs_inserted AFTER INSERT ON flipbook.jobs
            FOR EACH STATEMENT EXECUTE FUNCTION flipbook.notify_jobs()
            """,
            // A job that ends (done or failed) sends its id on flipbook_done, at commit.
            """
            CREATE FUNCTION flipbook.notify_done() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('flipbook_done', NEW.id::text); RETURN NULL; END $$
            """,
            """
            CREATE TRIGGER jobs_finished AFTER UPDATE OF state ON flipbook.jobs FOR EACH ROW
            WHEN (NEW.state IN ('done', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
            EXECUTE FUNCTION flipbook.notify_done()
            """,
        ]),
        // Issue 45. Every column is nullable or has a constant default, so on PostgreSQL 11 and later each ADD is
        // a catalogue change, not a rewrite of the table; apps that insert as before are unaffected.
        (2, [
            // The app's W3C traceparent, which the worker continues (docs/ingest-worker.md, "Traces").
            "ALTER TABLE flipbook.jobs ADD COLUMN trace_context text",
            // When the worker claimed it; `started_at` is now when a thread started it (its attempt then
            // counts, see `JobQueue.reapExpired`).
            "ALTER TABLE flipbook.jobs ADD COLUMN claimed_at timestamptz",
            // Every attempt's error, oldest first; `error` stays the last one. `queue retry` keeps them.
            "ALTER TABLE flipbook.jobs ADD COLUMN errors jsonb NOT NULL DEFAULT '[]'::jsonb",
            // Retention (`JobQueue.prune`) and `queue list` find finished rows by age through this, never
            // touching the claim index.
            "CREATE INDEX jobs_finished ON flipbook.jobs (state, finished_at) WHERE state IN ('done', 'failed', 'cancelled')",
        ]),
    ]

    public static var latestVersion: Int { steps.last?.version ?? 0 }

    /// The schema version of the database `connection` reaches (0: no schema `flipbook`). Costs one query.
    public static func currentVersion(connection: PostgresConnection, logger: Logger) async throws -> Int {
        // Two statements: one naming a missing table fails at parse time, whatever branch would run.
        let exists = try await connection.query("SELECT to_regclass('flipbook.schema_migrations') IS NOT NULL",
                                                 logger: logger).collect()
        guard try exists.first?.decode(Bool.self) == true else { return 0 }
        let rows = try await connection.query("SELECT coalesce(max(version), 0)::int8 FROM flipbook.schema_migrations",
                                              logger: logger).collect()
        return try rows.first?.decode(Int.self) ?? 0
    }

    /// What to tell someone whose database is at `version`, below the latest: the command that upgrades it.
    public static func upgradeAdvice(version: Int) -> String {
        (version == 0 ? "the database has no schema flipbook" : "schema flipbook is at version \(version), this flipbook needs \(latestVersion)")
            + ": run `flipbook worker --database URL --migrate` first"
    }

    /// Creates or upgrades schema `flipbook` over one connection of its own, made from `configuration`: while
    /// the server cannot be reached (refused, unresolvable, timed out) it tries again with backoff for up to
    /// `waitSeconds` (a migration Job may start before its database), then throws that connection error. Other
    /// errors (a wrong password, a failed statement) throw at once. Through a pool, a wrong address was retried
    /// for ever: `flipbook worker --migrate` never exited.
    @discardableResult
    public static func migrate(configuration: PostgresConnection.Configuration, waitSeconds: Double = 60,
                               logger: Logger) async throws -> [Int] {
        let start = ContinuousClock.now
        var backoff = Backoff()
        while true {
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            } catch let error as PSQLError where error.code == .connectionError {
                guard start.duration(to: .now) < .seconds(waitSeconds) else { throw error }
                logger.warning("cannot reach PostgreSQL yet, trying again: \(String(reflecting: error))")
                try await Task.sleep(for: .seconds(backoff.next()))
                continue
            }
            do {
                let applied = try await migrate(connection: connection, logger: logger)
                try? await connection.close()
                return applied
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// Applies the missing migrations over `connection`, holding the advisory lock.
    static func migrate(connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        _ = try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger).collect()
        do {
            let applied = try await apply(connection, logger: logger)
            _ = try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            return applied
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger).collect()
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            throw error
        }
    }

    private static func apply(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        _ = try await connection.query("CREATE SCHEMA IF NOT EXISTS flipbook", logger: logger).collect()
        _ = try await connection.query("""
            CREATE TABLE IF NOT EXISTS flipbook.schema_migrations (
                version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger).collect()
        var current = 0
        for try await version in try await connection.query(
            "SELECT coalesce(max(version), 0)::int8 FROM flipbook.schema_migrations", logger: logger).decode(Int.self) {
            current = version
        }
        var applied: [Int] = []
        for step in steps where step.version > current {
            _ = try await connection.query("BEGIN", logger: logger).collect()
            for statement in step.statements {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
            }
            _ = try await connection.query("INSERT INTO flipbook.schema_migrations (version) VALUES (\(step.version))", logger: logger).collect()
            _ = try await connection.query("COMMIT", logger: logger).collect()
            logger.info("applied migration \(step.version)")
            applied.append(step.version)
        }
        return applied
    }
}
