import Foundation
import FlipbookService
import Logging
import PostgresNIO
import Synchronization

/// One worker process's loop over `flipbook.jobs`: claim while slots are free, run each job on a thread of
/// the worker's own pool, renew the leases, record results, wake on NOTIFY or the poll, and stop on `stop()`.
/// No signals in here: the executable calls `stop()` on SIGTERM.
public final class QueueWorker: Sendable {
    public struct Configuration: Sendable {
        /// Jobs at once (threads).
        public var concurrency = 1
        /// Seconds a claim holds without renewal; renewed every third of it.
        public var leaseSeconds = 30.0
        /// After `stop()`, seconds running jobs may take before they are given back.
        public var graceSeconds = 30.0
        /// The fallback poll when no NOTIFY arrives (and how often expired leases are reaped, at most).
        public var pollSeconds = 2.0
        /// The first retry's delay; doubled per attempt (capped at 10 minutes), with ±50% jitter.
        public var retryBaseSeconds = 1.0
        /// This worker's name in the `worker` column; must be unique among live workers.
        public var name = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
        public init() {}
    }

    private struct State {
        /// Every job held: claimed, running, or finished with its outcome still being written.
        var running: [Int64: Job] = [:]
        /// The held jobs whose runner has returned: they hold a lease until written, but no thread.
        var recording: Set<Int64> = []
        var stopping = false
    }

    public let configuration: Configuration
    public let metrics: WorkerMetrics
    private let client: PostgresClient
    private let queue: JobQueue
    private let completions: Completions
    private let runner: JobRunner
    private let logger: Logger
    private let pool: WorkerPool
    private let wakeup = Wakeup()
    private let state = Mutex(State())

    public init(client: PostgresClient, configuration: Configuration, metrics: WorkerMetrics = WorkerMetrics(),
                logger: Logger, runner: @escaping JobRunner) {
        self.client = client
        self.configuration = configuration
        self.metrics = metrics
        self.runner = runner
        self.logger = logger
        // A statement unanswered for half a lease (at least 5 s) is retried on another connection (`Deadline`).
        queue = JobQueue(client: client, worker: configuration.name, logger: logger, timeout: max(5, configuration.leaseSeconds / 2))
        completions = Completions(queue: queue)
        // Room for every job the loop may hold (2 x concurrency) beside the ones whose threads have resumed
        // their task but not yet counted themselves free: with a queue of only `concurrency`, the next claim
        // sometimes arrived first and the pool refused it as busy, failing the job's attempt 1 (seen as
        // "attempts 2" in the 500-job test under load).
        pool = WorkerPool(threads: configuration.concurrency, queueLimit: configuration.concurrency * 2)
    }

    /// Stop claiming; `run` returns once running jobs end (or are given back after the grace period).
    public func stop() {
        state.withLock { $0.stopping = true }
        wakeup.signal()
    }

    /// Jobs this worker holds right now (running, claimed and waiting for a thread, or being recorded).
    public var runningCount: Int { state.withLock { $0.running.count } }

    /// Held jobs that still need a thread: what the claim loop fills up to its capacity. A job whose outcome
    /// is being written no longer counts, so the next claim overlaps that write.
    var unfinishedCount: Int { state.withLock { $0.running.count - $0.recording.count } }

    /// The ids of the jobs this worker holds, for renewing their leases.
    var heldIDs: [Int64] { state.withLock { Array($0.running.keys) } }

    /// Runs until `stop()`. `client.run()` must be running meanwhile. Database errors are logged and retried
    /// with backoff, never thrown: a restart or failover of PostgreSQL is waited out.
    public func run() async {
        let listener = Task { await listen() }
        let heartbeat = Task { await beat() }
        var backoff = Backoff()
        // Hold up to twice the slots: a thread that finishes finds its next job already claimed instead of
        // waiting a claim's round trip (held jobs are leased and renewed like running ones).
        let capacity = configuration.concurrency * 2
        while !state.withLock({ $0.stopping }) {
            let free = capacity - unfinishedCount
            var claimed: [Job] = []
            if free > 0 {
                do {
                    claimed = try await queue.claim(limit: free, lease: configuration.leaseSeconds)
                    backoff.reset()
                } catch {
                    logger.warning("claim failed, retrying: \(String(reflecting: error))")
                    await wakeup.wait(seconds: backoff.next())
                    continue
                }
                for job in claimed { start(job) }
            }
            // A full claim may mean more are waiting: claim again at once if there is room.
            if free > 0 && claimed.count == free && unfinishedCount < capacity { continue }
            await wakeup.wait(seconds: configuration.pollSeconds)
        }
        listener.cancel()
        heartbeat.cancel()
        await drain()
    }

    private func start(_ job: Job) {
        state.withLock { $0.running[job.id] = job }
        metrics.running(runningCount)
        Task {
            let started = ContinuousClock.now
            let runner = self.runner
            let outcome: JobOutcome
            do {
                outcome = try await pool.run { runner(job) }
            } catch {
                outcome = .failed(code: "internal", message: "\(error)", permanent: false)
            }
            let elapsed = ContinuousClock.now - started
            // Its thread is free: let the loop claim the next job while this one's outcome is written.
            state.withLock { _ = $0.recording.insert(job.id) }
            wakeup.signal()
            await record(job, outcome, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
            state.withLock {
                _ = $0.running.removeValue(forKey: job.id)
                _ = $0.recording.remove(job.id)
            }
            metrics.running(runningCount)
            wakeup.signal()
        }
    }

    /// Writes the outcome, retrying through database outages (the fencing makes a late write harmless).
    private func record(_ job: Job, _ outcome: JobOutcome, seconds: Double) async {
        var backoff = Backoff()
        while true {
            do {
                switch outcome {
                case .done(let result):
                    if try await completions.finish(job, result: result) {
                        metrics.finished(state: "done", seconds: seconds)
                    } else {
                        logger.warning("job \(job.id): lease lost before it finished; its result was dropped")
                    }
                case .failed(let code, let message, let permanent):
                    let delay = retryDelay(attempt: job.attempt)
                    if let state = try await queue.fail(job, code: code, message: message, permanent: permanent, delay: delay) {
                        metrics.finished(state: state, seconds: seconds)
                        logger.notice("job \(job.id) (\(job.source)) attempt \(job.attempt): \(code): \(message); now \(state)")
                    } else {
                        logger.warning("job \(job.id): lease lost before it failed")
                    }
                }
                return
            } catch {
                if backoff.attempts > 0 && state.withLock({ $0.stopping }) && backoff.attempts > 50 { return }
                logger.warning("job \(job.id): recording its outcome failed, retrying: \(String(reflecting: error))")
                try? await Task.sleep(for: .seconds(backoff.next()))
            }
        }
    }

    func retryDelay(attempt: Int) -> Double {
        let exponent = Double(min(max(attempt - 1, 0), 20))
        let base = min(configuration.retryBaseSeconds * pow(2, exponent), 600)
        return base * Double.random(in: 0.5...1.5)
    }

    /// LISTEN flipbook_jobs on a connection of its own; reconnects with backoff, and wakes the loop after
    /// each (jobs committed while it was away sent their NOTIFY to nobody).
    private func listen() async {
        var backoff = Backoff()
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: "flipbook_jobs") { notifications in
                        backoff.reset()
                        wakeup.signal()
                        for try await _ in notifications { wakeup.signal() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.info("LISTEN connection lost, reconnecting: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: .seconds(backoff.next()))
        }
    }

    /// Renews this worker's leases every third of the lease, reaps other workers' expired ones, and
    /// refreshes the queue gauges.
    private func beat() async {
        let period = max(configuration.leaseSeconds / 3, 0.05)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(period))
            do {
                let held = heldIDs
                if !held.isEmpty { metrics.renewed(try await queue.renew(held, lease: configuration.leaseSeconds)) }
                let reaped = try await queue.reapExpired()
                if reaped > 0 {
                    metrics.reaped(reaped)
                    logger.info("\(reaped) job(s) whose lease expired went back to the queue")
                    wakeup.signal()
                }
                metrics.states(try await queue.countsByState())
            } catch {
                if Task.isCancelled { return }
                logger.warning("heartbeat failed: \(String(reflecting: error))")
            }
        }
    }

    /// After stop: wait up to the grace period for running jobs (renewing their leases), then give back the rest.
    private func drain() async {
        let deadline = ContinuousClock.now + .seconds(configuration.graceSeconds)
        var lastRenewal = ContinuousClock.now
        while runningCount > 0 && ContinuousClock.now < deadline {
            await wakeup.wait(seconds: 0.1)
            if ContinuousClock.now - lastRenewal > .seconds(configuration.leaseSeconds / 3) {
                _ = try? await queue.renew(heldIDs, lease: configuration.leaseSeconds)
                lastRenewal = .now
            }
        }
        let left = state.withLock { Array($0.running.values) }
        if !left.isEmpty {
            logger.notice("grace period over: giving back \(left.count) job(s)")
            try? await queue.giveBack(left)
        }
    }
}

/// 0.1 s doubling to 5 s, with jitter: for reconnecting to the database.
struct Backoff {
    var attempts = 0
    mutating func reset() { attempts = 0 }
    mutating func next() -> Double {
        attempts += 1
        return min(0.1 * pow(2, Double(min(attempts - 1, 10))), 5) * Double.random(in: 0.75...1.25)
    }
}
