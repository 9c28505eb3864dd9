import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A PostgreSQL connection of its own for a caller that runs one statement at a time: the claim loop, the
/// completions writer. Their statements go straight to the connection's event loop, without the pool's lease.
///
/// Why: a `probe` job costs about a millisecond, and the worker's claim and finish statements (one each per few
/// dozen jobs) cost it more than the statements' own work in the pool. Each pooled statement leased a connection
/// through the pool's state machine, which hops between threads, and on release armed an idle timer: a task
/// that sleeps and wakes libdispatch's manager thread. Over 12,000 `probe` jobs the pool's tasks, timers and
/// connection actions made about a third of the worker's thread wake-ups outside its job threads.
///
/// The connection opens at the first statement, and again after one fails or times out: `drop` closes it, so a
/// statement stuck on a connection PostgreSQL no longer answers (see `Deadline`) ends there, and the retry runs
/// on a fresh one.
final class Session: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let current = Mutex<PostgresConnection?>(nil)
    private let opened = Atomic<Int>(0)

    /// `eventLoop`: where the connection runs; the worker gives its sessions and its completions' timer the
    /// same one, so that their work wakes one thread.
    init(configuration: PostgresConnection.Configuration, eventLoop: any EventLoop, logger: Logger) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// Runs `query` and collects its rows on the connection's event loop, or throws `QueryTimeout` after
    /// `deadline`'s seconds. A failure or a timeout closes the connection.
    func rows(_ query: PostgresQuery, deadline: Deadline) async throws -> [PostgresRow] {
        let connection = try await open(deadline: deadline)
        do {
            // The future-returning query: its rows are collected on the event loop and the caller resumed once,
            // where the async row sequence hopped back to the event loop for each demand. Started on the event
            // loop, so that the futures it chains need no hop of their own.
            return try await deadline.wait(on: connection.eventLoop) { [logger] in
                connection.query(query, logger: logger)
            }.rows
        } catch {
            drop(connection)
            throw error
        }
    }

    /// Counts the connections opened; the current one's number (0 before the first). A caller that set up
    /// session state (a lock) on one connection compares it to know whether it must do so again.
    var generation: Int { current.withLock { c in c.map { _ in opened.load(ordering: .relaxed) } ?? 0 } }

    /// Closes whatever connection is open; the next statement opens another.
    func reset() {
        if let connection = current.withLock({ c -> PostgresConnection? in defer { c = nil }; return c }) {
            Self.close(connection)
        }
    }

    private func open(deadline: Deadline) async throws -> PostgresConnection {
        if let connection = current.withLock({ $0 }), !connection.isClosed { return connection }
        let id = opened.add(1, ordering: .relaxed).newValue
        let connection = try await deadline.run { [configuration, eventLoop, logger] in
            let connection = try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id,
                                                                  logger: logger)
            // Connected after the deadline gave up on it: nobody will use or close it but us.
            if Task.isCancelled {
                try? await connection.close()
                throw CancellationError()
            }
            return connection
        }
        // One caller at a time: nobody else opened one meanwhile. A caller whose statement timed out may still
        // be inside `rows` on the old connection; `drop` only closes the connection it was handed.
        let previous = current.withLock { c -> PostgresConnection? in defer { c = connection }; return c }
        if let previous, previous !== connection { Self.close(previous) }
        return connection
    }

    private func drop(_ connection: PostgresConnection) {
        current.withLock { c in if c === connection { c = nil } }
        Self.close(connection)
    }

    /// Starts closing `connection` without waiting: whatever is in flight on it fails. The connection lives
    /// until its channel has closed (PostgresNIO asserts that no open connection is released).
    private static func close(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}
