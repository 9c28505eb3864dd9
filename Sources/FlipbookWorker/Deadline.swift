import Synchronization

/// A database call that took longer than the worker waits for one.
struct QueryTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no answer from PostgreSQL within \(seconds) s" }
}

/// Runs an async operation with a deadline that holds even when the operation ignores cancellation.
///
/// Why not a task group: a group waits for every child before it returns, and the call this guards is
/// one that never returns. PostgresNIO 1.33 left a query that was in flight on a connection when PostgreSQL
/// restarted waiting forever (seen in the restart test: a worker's `finish` for two jobs claimed 0.1 s before
/// the restart never came back, and the jobs stayed `running`, their leases renewed, for 10 minutes). Here
/// the caller resumes at the deadline with `QueryTimeout` and retries on a fresh connection; the stuck
/// operation is cancelled and left to end whenever it does, its result dropped.
enum Deadline {
    static func run<T: Sendable>(seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let gate = Gate<T>()
        return try await withCheckedThrowingContinuation { continuation in
            gate.arm(continuation)
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                gate.finish(result)
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(seconds))
                if !Task.isCancelled, gate.finish(.failure(QueryTimeout(seconds: seconds))) { work.cancel() }
            }
            gate.onFinish { timer.cancel() }
        }
    }
}

/// The continuation, resumed exactly once by whichever of the operation and the timer finishes first.
private final class Gate<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var done = false
        var cleanup: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func arm(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    /// Runs `cleanup` once the gate has finished (now, if it already has).
    func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.done { return true }
            s.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    /// Resumes the caller with `result` if nobody has yet; returns whether this call did.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, cleanup) = state.withLock { s -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            if s.done { return (nil, nil) }
            s.done = true
            defer { s.continuation = nil; s.cleanup = nil }
            return (s.continuation, s.cleanup)
        }
        guard let continuation else { return false }
        continuation.resume(with: result)
        cleanup?()
        return true
    }
}
