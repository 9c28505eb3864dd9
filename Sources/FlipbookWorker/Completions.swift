import Synchronization

/// Group commit for finished jobs: results that arrive while a write is in flight wait and go together in
/// the next one, so a worker whose jobs take a millisecond (the `probe` recipe) writes one UPDATE per batch
/// instead of one per job, and an idle worker still writes each result at once.
final class Completions: Sendable {
    private struct Waiting {
        var job: Job
        var result: String
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let queue: JobQueue
    private let state = Mutex(State())
    /// Most results one statement carries.
    private let batchLimit = 256

    init(queue: JobQueue) { self.queue = queue }

    /// Records `result` for `job` with whatever else is waiting; true if it was recorded, false if the job is
    /// no longer this worker's. Throws what the write threw (the caller retries).
    func finish(_ job: Job, result: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let writer = state.withLock { s -> Bool in
                s.waiting.append(Waiting(job: job, result: result, continuation: continuation))
                if s.writing { return false }
                s.writing = true
                return true
            }
            if writer { Task { await self.write() } }
        }
    }

    /// Writes batches until nothing waits.
    private func write() async {
        while true {
            let batch = state.withLock { s -> [Waiting] in
                let taken = Array(s.waiting.prefix(batchLimit))
                s.waiting.removeFirst(taken.count)
                if taken.isEmpty { s.writing = false }
                return taken
            }
            if batch.isEmpty { return }
            do {
                let recorded = try await queue.finish(batch.map { ($0.job, $0.result) })
                for waiting in batch { waiting.continuation.resume(returning: recorded.contains(waiting.job.id)) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
