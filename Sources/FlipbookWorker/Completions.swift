import Logging
import NIOCore
import Synchronization

/// Group commit for finished jobs: results that arrive while a write is in flight wait and go together in
/// the next one, and while the latest result says more are due soon (its `linger`) the writer waits that
/// long for them first. A worker whose jobs take a millisecond (the `probe` recipe) writes one UPDATE per few dozen jobs
/// instead of one per job; an idle worker, or one whose jobs are slow, still writes each result at once.
///
/// `add` never waits: a pool thread hands its result over and goes on to the next job. A write that fails
/// because the database went away is retried with backoff until it goes through; the fencing in
/// `JobQueue.finish` makes a late write harmless. A write PostgreSQL refuses (a value it rejects) is not
/// retried: that would refuse again for ever and hold up every later result. The batch is written again
/// one result at a time, and a result refused alone is reported `rejected`, for its job to be failed.
final class Completions: Sendable {
    /// How a result's write ended.
    enum Written: Sendable, Equatable {
        /// The job is `done` with this result.
        case recorded
        /// The job was no longer this worker's (its lease expired meanwhile, or it was cancelled).
        case lost
        /// PostgreSQL refused the result itself; the message is its error.
        case rejected(String)
    }

    /// Called once the result is written.
    typealias Recorded = @Sendable (Written) -> Void

    private struct Waiting {
        var job: Job
        var result: String
        var recorded: Recorded
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
        /// The writer while it lingers; `add` resumes it early once nothing more is due.
        var lingering: CheckedContinuation<Void, Never>?
        var lingerRound = 0
        /// The last round whose timer fired: one that fires before its wait has begun still ends it.
        var firedRound = 0
        /// Seconds the writer may wait for more results before its next write: the latest `add`'s.
        var linger = 0.0
    }

    private let queue: JobQueue
    private let logger: Logger
    private let state = Mutex(State())
    /// Most results one statement carries.
    private let batchLimit = 256
    /// Where the linger's timer runs (see `wait`): the event loop of the worker's own connections.
    private let timers: any EventLoop

    init(queue: JobQueue, logger: Logger, timers: any EventLoop) {
        self.queue = queue
        self.logger = logger
        self.timers = timers
    }

    /// Queues `result` for `job`; `recorded` runs after the write that carries it. `linger` is how long the
    /// writer may wait for more results (0: no other result will come soon, so a lingering writer writes at
    /// once).
    func add(_ job: Job, result: String, linger: Double, recorded: @escaping Recorded) {
        let (writer, lingering) = state.withLock { s -> (Bool, CheckedContinuation<Void, Never>?) in
            s.waiting.append(Waiting(job: job, result: result, recorded: recorded))
            s.linger = linger
            // The last result due (or a full batch) ends the writer's wait: the tail of a run is not delayed.
            var lingering: CheckedContinuation<Void, Never>?
            if linger == 0 || s.waiting.count >= batchLimit { swap(&lingering, &s.lingering) }
            if s.writing { return (false, lingering) }
            s.writing = true
            return (true, lingering)
        }
        lingering?.resume()
        if writer { Task { await self.write() } }
    }

    /// Waits up to `seconds` for more results, or until `add` sees that no more are due. The timer is the event
    /// loop's (the database connections' own loop, awake anyway): a timer task (`Task.sleep`) cost a task, a
    /// libdispatch timer and a wake-up of dispatch's manager thread per write, about a fifth of the worker's
    /// wake-ups outside its job threads over 12,000 `probe` jobs.
    private func wait(seconds: Double) async {
        // Numbered, so that a timer that fires late never ends a later wait.
        let round = state.withLock { s -> Int in
            s.lingerRound += 1
            return s.lingerRound
        }
        let timer = timers.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            self.state.withLock { s -> CheckedContinuation<Void, Never>? in
                guard s.lingerRound == round else { return nil }
                s.firedRound = round
                var lingering: CheckedContinuation<Void, Never>?
                swap(&lingering, &s.lingering)
                return lingering
            }?.resume()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.waiting.count >= batchLimit || s.firedRound == round { return true }
                s.lingering = continuation
                return false
            }
            if now { continuation.resume() }
        }
        // Only a timer that has not fired: cancelling fails its promise, a hop to the event loop.
        if state.withLock({ $0.firedRound != round }) { timer.cancel() }
    }

    /// Writes batches until nothing waits.
    private func write() async {
        while true {
            let wait = state.withLock { $0.linger }
            if wait > 0 { await self.wait(seconds: wait) }
            let batch = state.withLock { s -> [Waiting] in
                let taken = Array(s.waiting.prefix(batchLimit))
                s.waiting.removeFirst(taken.count)
                if taken.isEmpty { s.writing = false }
                return taken
            }
            if batch.isEmpty { return }
            let written = await writeUntilDone(batch)
            for (waiting, outcome) in zip(batch, written) { waiting.recorded(outcome) }
        }
    }

    /// How each of `batch`'s writes ended, in its order.
    private func writeUntilDone(_ batch: [Waiting]) async -> [Written] {
        var backoff = Backoff()
        while true {
            do {
                let recorded = try await queue.finish(batch.map { ($0.job, $0.result) })
                return batch.map { recorded.contains($0.job.id) ? .recorded : .lost }
            } catch where JobQueue.isRejection(error) {
                if batch.count == 1 { return [.rejected(JobQueue.describe(error))] }
                logger.warning("PostgreSQL refused a batch of \(batch.count) results; writing them one at a time: \(JobQueue.describe(error))")
                var written: [Written] = []
                for waiting in batch { written += await writeUntilDone([waiting]) }
                return written
            } catch {
                logger.warning("recording \(batch.count) result(s) failed, retrying: \(String(reflecting: error))")
                try? await Task.sleep(for: .seconds(backoff.next()))
            }
        }
    }
}
