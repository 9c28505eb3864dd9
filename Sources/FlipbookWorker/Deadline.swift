import NIOCore
import Synchronization

/// A database call that took longer than the worker waits for one.
struct QueryTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no answer from PostgreSQL within \(seconds) s" }
}

/// Runs async operations with deadlines that hold even when an operation ignores cancellation.
///
/// Why not a task group: a group waits for every child before it returns, and the call this guards is
/// one that never returns. PostgresNIO 1.33 left a query that was in flight on a connection when PostgreSQL
/// restarted waiting forever (seen in the restart test: a worker's `finish` for two jobs claimed 0.1 s before
/// the restart never came back, and the jobs stayed `running`, their leases renewed, for 10 minutes). Here
/// the caller resumes at the deadline with `QueryTimeout` and retries on a fresh connection; the stuck
/// operation is cancelled and left to end whenever it does, its result dropped.
///
/// Why one sweeper and not a timer per call: a timer task per statement (`Task.sleep` for the timeout, then
/// cancelled) left a libdispatch timer behind each time, which fired seconds later on dispatch's manager
/// thread. With hundreds of statements a second (2,000 `probe` jobs, beside a fresh-clone `make test`) the
/// worker made 0.72-0.84 voluntary context switches a job, 0.54 without those timers and the poll's (see
/// `Wakeup.wait()`); on a quiet machine the gain is within noise. Now calls in flight are listed here, and one
/// sweeper task, alive only while some are, wakes every `resolution` seconds and expires the overdue: a
/// deadline fires up to `resolution` late.
final class Deadline: Sendable {
    private struct State {
        var armed: [UInt64: (due: ContinuousClock.Instant, expire: @Sendable () -> Void)] = [:]
        var nextID: UInt64 = 0
        var sweeping = false
    }
    private let state = Mutex(State())
    let seconds: Double
    let resolution: Double

    init(seconds: Double, resolution: Double = 1) {
        self.seconds = seconds
        self.resolution = resolution
    }

    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await guarded { gate in
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                gate.finish(result)
            }
            return { work.cancel() }
        }
    }

    /// Runs `start` on `eventLoop` and waits for the future it returns (no task of its own, one hop to the
    /// loop and one back), or throws `QueryTimeout` after the deadline's seconds; the future is then left to
    /// complete whenever it does, its result dropped.
    func wait<T: Sendable>(on eventLoop: any EventLoop, for start: @escaping @Sendable () -> EventLoopFuture<T>) async throws -> T {
        try await guarded { gate in
            eventLoop.execute { start().whenComplete { gate.finish($0) } }
            return {}
        }
    }

    /// The caller's side of both forms: `start` begins the call, which hands its result to the gate, and
    /// returns what abandons it; the deadline resumes the caller with `QueryTimeout` first if it passes, and
    /// then abandons the call.
    private func guarded<T: Sendable>(_ start: (Gate<T>) -> @Sendable () -> Void) async throws -> T {
        let gate = Gate<T>()
        let seconds = self.seconds
        return try await withCheckedThrowingContinuation { continuation in
            gate.arm(continuation)
            let abandon = start(gate)
            let id = arm(due: .now + .seconds(seconds)) {
                if gate.finish(.failure(QueryTimeout(seconds: seconds))) { abandon() }
            }
            gate.onFinish { [self] in disarm(id) }
        }
    }

    private func arm(due: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, startSweeper) = state.withLock { s -> (UInt64, Bool) in
            s.nextID += 1
            s.armed[s.nextID] = (due, expire)
            defer { s.sweeping = true }
            return (s.nextID, !s.sweeping)
        }
        if startSweeper { Task { await sweep() } }
        return id
    }

    private func disarm(_ id: UInt64) {
        _ = state.withLock { $0.armed.removeValue(forKey: id) }
    }

    /// Calls in flight (for the tests).
    var armedCount: Int { state.withLock { $0.armed.count } }

    /// Expires overdue calls every `resolution` seconds; ends (in the same lock as the check, so that `arm`
    /// starts a new one) once nothing is armed.
    private func sweep() async {
        while true {
            try? await Task.sleep(for: .seconds(resolution))
            let now = ContinuousClock.now
            let overdue = state.withLock { s -> [@Sendable () -> Void]? in
                if s.armed.isEmpty {
                    s.sweeping = false
                    return nil
                }
                let due = s.armed.filter { $0.value.due <= now }
                for id in due.keys { s.armed.removeValue(forKey: id) }
                return due.values.map(\.expire)
            }
            guard let overdue else { return }
            for expire in overdue { expire() }
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
        cleanup?()  // first: the caller, once resumed, finds nothing of this call left armed
        continuation.resume(with: result)
        return true
    }
}
