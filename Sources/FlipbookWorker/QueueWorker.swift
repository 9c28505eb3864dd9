import Foundation
import FlipbookService
import Logging
import PostgresNIO
import Synchronization
import Tracing

/// One worker process's loop over `flipbook.jobs`: claim while slots are free, run each job on a thread of
/// the worker's own pool (highest priority first), renew the leases on a connection and schedule of their own,
/// stop jobs that run past their timeout or are cancelled, record results, wake on NOTIFY or the poll, and
/// stop on `stop()`. No signals in here: the executable calls `stop()` on SIGTERM, and exits non-zero when
/// `wedged` says a job's work would not stop.
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
        /// Seconds a job may run before its work is told to stop and it is recorded `timeout` (retryable).
        public var jobTimeoutSeconds = 600.0
        /// Timeouts of particular recipes, by name (a recipe file's `timeout`), overriding `jobTimeoutSeconds`.
        public var recipeTimeouts: [String: Double] = [:]
        /// Seconds past its timeout after which a job's work that has not stopped is taken for stuck: the worker
        /// then stops claiming, records it `timeout` and `run` returns with `wedged` set, for the process to
        /// exit rather than let a second worker run the job beside a thread that still does.
        public var stuckSeconds = 60.0
        /// How long finished rows are kept; the worker prunes the rest every `retention.intervalSeconds`.
        public var retention = Retention()
        /// Where job spans go (nil: none are made). Each job's span continues the app's `traceparent` (column
        /// `trace_context`), begins when it was enqueued, and has children for the claim wait, the work's own
        /// spans (`JobControl.trace`) and the result's commit. Passed in: the library never bootstraps tracing.
        public var tracer: (any Tracer)?
        /// This worker's name in the `worker` column; must be unique among live workers.
        public var name = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
        public init() {}
    }

    private struct State {
        /// Every job held: claimed, running, or finished with its outcome still being written; by id and
        /// attempt (a job given back and claimed again is another).
        var running: [JobKey: Job] = [:]
        /// The held jobs whose start is recorded (`started_at`): their attempt counts if this worker dies.
        var started: Set<JobKey> = []
        /// A `markStarted` is in flight: dispatching waits for it.
        var marking = false
        /// The jobs whose runner is on a thread, with what stops them.
        var controls: [JobKey: (job: Job, control: JobControl)] = [:]
        /// A job's work did not stop within `stuckSeconds` of its timeout.
        var wedged = false
        /// The open span of each job on a thread or being recorded (only with a tracer).
        var spans: [JobKey: any Span] = [:]
        /// The held jobs not yet handed to a thread, oldest first (from `waitingHead` on).
        var waiting: [Job] = []
        var waitingHead = 0
        /// Jobs handed to the pool whose runner has not returned: at most one per thread.
        var onThreads = 0
        /// The held jobs whose runner has returned: they hold a lease until written, but no thread.
        var recording: Set<JobKey> = []
        var stopping = false
        /// How long recent jobs took, overall and by recipe.
        var times = JobTimes()
        /// The last claim got fewer jobs than it asked for: the queue had no more. Until news that it may
        /// have (`queueChanged`), a finishing job does not wake the claim loop. Without this, each of the
        /// last few dozen jobs of a batch woke it for a claim that found nothing: 22 empty claims a round.
        var drained = false
        /// Counts `queueChanged` calls, so that news arriving during a claim is not lost.
        var news = 0

        var unfinished: Int { running.count - recording.count }
    }

    /// How many jobs the loop holds, and when it claims more.
    struct HoldLimits: Equatable {
        /// Most unfinished jobs held at once.
        var capacity: Int
        /// Claim again once unfinished jobs are at most this many.
        var refill: Int
        /// Seconds a finished job's result may wait for others to share its UPDATE (0: write at once).
        var linger: Double

        /// One extra job per thread (so a thread that finishes finds its next job already claimed) until jobs
        /// are known to be short; then as many as `window` seconds of recent jobs (`JobTimes.pace`), at most
        /// 64 per thread, claimed half of them at a time, with results lingering up to 40 ms to share a write.
        /// A queue of millisecond jobs (the `probe` recipe) then takes one claim and one completion UPDATE per
        /// few dozen jobs instead of one each (2,000 jobs: 2.0x the wall time of local ingest before, 1.04-1.09x
        /// after); a queue of slow jobs behaves as without prefetch. A job ten times the recent ones shrinks
        /// the limits at once (the average moves a tenth of the way), and they grow back over a few dozen
        /// short ones; held jobs that would then wait long are given back (`ran`).
        static func limits(concurrency: Int, pace: Double?, window: Double = 0.1) -> HoldLimits {
            let perThread = pace.map { max(1, min(64, Int(window / max($0, 1e-6)))) } ?? 1
            let capacity = concurrency * (1 + perThread)
            if perThread == 1 { return HoldLimits(capacity: capacity, refill: capacity - 1, linger: 0) }
            let batch = concurrency * perThread / 2
            return HoldLimits(capacity: capacity, refill: capacity - batch, linger: min(0.04, window / 2))
        }
    }

    private var limits: HoldLimits {
        state.withLock { HoldLimits.limits(concurrency: configuration.concurrency, pace: $0.times.pace) }
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

    /// `connection`: how the claim loop and the completions writer open connections of their own (`Session`);
    /// without it they use `client`'s pool.
    public init(client: PostgresClient, connection: PostgresConnection.Configuration? = nil, configuration: Configuration,
                metrics: WorkerMetrics = WorkerMetrics(), logger: Logger, runner: @escaping JobRunner) {
        self.client = client
        self.configuration = configuration
        self.metrics = metrics
        self.runner = runner
        self.logger = logger
        // A statement unanswered for half a lease (at least 5 s) is retried on another connection (`Deadline`).
        queue = JobQueue(client: client, connection: connection, worker: configuration.name, logger: logger,
                         timeout: max(5, configuration.leaseSeconds / 2))
        completions = Completions(queue: queue, logger: logger, timers: queue.eventLoop)
        // `dispatch` hands the pool one job per thread; the queue has room beside them for a thread that has
        // counted itself free (`ran`) but not yet returned to the pool. A pool that refused a job as busy
        // failed its attempt 1 (seen as "attempts 2" in the 500-job test under load).
        pool = WorkerPool(threads: configuration.concurrency, queueLimit: configuration.concurrency * 2)
    }

    /// Stop claiming; `run` returns once running jobs end (or are given back after the grace period).
    public func stop() {
        state.withLock { $0.stopping = true }
        wakeup.signal()
    }

    /// Jobs this worker holds right now (running, claimed and waiting for a thread, or being recorded).
    public var runningCount: Int { state.withLock { $0.running.count } }

    /// Whether a job's work went on past its timeout and would not stop: `run` has returned without waiting
    /// for it, and the process should exit (non-zero) so that the thread ends before the job runs elsewhere.
    public var wedged: Bool { state.withLock { $0.wedged } }

    /// Seconds `job` may run.
    func timeout(for job: Job) -> Double {
        configuration.recipeTimeouts[job.recipe] ?? configuration.jobTimeoutSeconds
    }

    /// Held jobs that still need a thread: what the claim loop fills up to its capacity. A job whose outcome
    /// is being written no longer counts, so the next claim overlaps that write.
    var unfinishedCount: Int { state.withLock { $0.unfinished } }

    /// The ids of the jobs this worker holds, for handing back what a lost claim took.
    var heldIDs: [Int64] { state.withLock { $0.running.keys.map(\.id) } }

    /// Runs until `stop()`. `client.run()` must be running meanwhile. Database errors are logged and retried
    /// with backoff, never thrown: a restart or failover of PostgreSQL is waited out.
    public func run() async {
        let listener = Task { await listen() }
        let heartbeat = Task { await beat() }
        let renewer = Task { await renewLeases() }
        let watchdog = Task { await watch() }
        let poller = Task { await poll() }
        let pruner = Task { await prune() }
        var backoff = Backoff()
        // A claim that failed may have committed with its answer lost; the next attempt first hands back what
        // it may have taken (`JobQueue.giveBackUnheld`).
        var unanswered = false
        // Held jobs beyond the running ones (see `HoldLimits`) are leased and renewed like running ones.
        while !state.withLock({ $0.stopping }) {
            let limits = self.limits
            let unfinished = unfinishedCount
            let free = limits.capacity - unfinished
            var claimed: [Job] = []
            if unfinished <= limits.refill {
                let news = state.withLock { $0.news }
                do {
                    if unanswered {
                        let back = try await queue.giveBackUnheld(heldIDs)
                        if back > 0 { logger.info("gave back \(back) job(s) a claim took whose answer was lost") }
                        unanswered = false
                    }
                    // Threads that no held job will fill: the claim marks that many started (they go to threads now).
                    let idle = state.withLock { s in
                        max(0, configuration.concurrency - s.onThreads - (s.waiting.count - s.waitingHead))
                    }
                    let answer = try await queue.claim(limit: free, lease: configuration.leaseSeconds, startNow: idle)
                    claimed = answer.map(\.job)
                    let started = answer.filter(\.started).map(\.job.key)
                    state.withLock { $0.started.formUnion(started) }
                    backoff.reset()
                } catch {
                    unanswered = true
                    logger.warning("claim failed, retrying: \(String(reflecting: error))")
                    await wakeup.wait(seconds: backoff.next())
                    continue
                }
                metrics.claimed(claimed.count)
                let short = claimed.count < free
                state.withLock { $0.drained = short && $0.news == news }
                if !claimed.isEmpty { start(claimed) }
            }
            // A full claim may mean more are waiting: claim again at once if there is room.
            if unfinished <= limits.refill && claimed.count == free && unfinishedCount <= self.limits.refill { continue }
            await wakeup.wait()
        }
        listener.cancel()
        heartbeat.cancel()
        poller.cancel()
        pruner.cancel()
        await drain()
        renewer.cancel()
        watchdog.cancel()
        queue.close()
    }

    /// Seconds of waiting for a thread beyond which held jobs no thread has started are given back.
    static let longWait = 1.0

    /// Holds `jobs` and hands what free threads there are to the pool.
    private func start(_ jobs: [Job]) {
        state.withLock { s in
            for job in jobs { s.running[job.key] = job }
            s.waiting.append(contentsOf: jobs)
        }
        metrics.running(runningCount)
        dispatch()
    }

    /// Hands waiting jobs to the pool while a thread is free. Held jobs wait here, not in the pool's queue,
    /// so that those not started yet can be given back (`ran`, `drain`). A job whose start is not recorded yet
    /// is marked first (`mark`), with those expected to follow it within 50 ms (`JobTimes.startBatch`).
    private func dispatch() {
        let (next, toMark) = state.withLock { s -> ([(Job, JobControl)], [Job]) in
            var next: [(Job, JobControl)] = []
            var toMark: [Job] = []
            let now = ContinuousClock.now
            while s.onThreads < configuration.concurrency && s.waitingHead < s.waiting.count {
                let job = s.waiting[s.waitingHead]
                if !s.started.contains(job.key) {
                    if !s.marking {
                        let onThreads = s.controls.values.map { ($0.job.recipe, Self.seconds(now - $0.control.started)) }
                        let count = s.times.startBatch(waiting: s.waiting[s.waitingHead...], onThreads: onThreads,
                                                       threads: configuration.concurrency)
                        toMark = s.waiting[s.waitingHead..<(s.waitingHead + max(1, count))].filter { !s.started.contains($0.key) }
                        s.marking = true
                    }
                    break
                }
                var trace: ServiceContext?
                if let tracer = configuration.tracer {
                    let span = Self.jobSpan(job, tracer: tracer)
                    s.spans[job.key] = span
                    trace = span.context
                }
                let control = JobControl(timeoutSeconds: timeout(for: job), started: now, trace: trace)
                s.controls[job.key] = (job, control)
                next.append((job, control))
                s.waitingHead += 1
                s.onThreads += 1
            }
            if s.waitingHead > 64 && s.waitingHead * 2 > s.waiting.count {
                s.waiting.removeFirst(s.waitingHead)
                s.waitingHead = 0
            }
            return (next, toMark)
        }
        if !toMark.isEmpty { Task { await mark(toMark) } }
        let runner = self.runner
        for (job, control) in next {
            do {
                try pool.submit { [self] in
                    let started = ContinuousClock.now
                    let outcome = runner(job, control)
                    ran(job, control, outcome, seconds: Self.seconds(ContinuousClock.now - started))
                }
            } catch {
                ran(job, control, .failed(code: "internal", message: "\(error)", permanent: false), seconds: 0)
            }
        }
    }

    /// The job's span: the app's trace continued (its `traceparent`), from when the job was enqueued, with
    /// a first child for the time until a thread took it (the claim wait) already ended.
    static func jobSpan(_ job: Job, tracer: any Tracer) -> any Span {
        var parent = ServiceContext.topLevel
        if let traceparent = job.traceContext {
            tracer.extract(["traceparent": traceparent], into: &parent, using: DictionaryExtractor())
        }
        let enqueued = job.enqueuedAt.map { WallInstant(seconds: $0) } ?? WallInstant.now
        let now = WallInstant.now
        let span = tracer.startSpan("flipbook.job", context: parent, ofKind: .consumer, at: min(enqueued, now))
        span.attributes["flipbook.job.id"] = Int(job.id)
        span.attributes["flipbook.job.recipe"] = job.recipe
        span.attributes["flipbook.job.source"] = job.source
        span.attributes["flipbook.job.attempt"] = job.attempt
        let wait = tracer.startSpan("claim wait", context: span.context, ofKind: .internal, at: min(enqueued, now))
        wait.end(at: now)
        return span
    }

    /// Ends `job`'s span (if any) with its outcome.
    private func endSpan(_ job: Job, outcome: String) {
        guard configuration.tracer != nil, let span = state.withLock({ $0.spans.removeValue(forKey: job.key) }) else { return }
        span.attributes["flipbook.job.outcome"] = outcome
        if outcome != "done" { span.setStatus(SpanStatus(code: .error, message: outcome)) }
        span.end()
    }

    /// A span under `job`'s for writing its outcome, or nil.
    private func commitSpan(_ job: Job) -> (any Span)? {
        guard let tracer = configuration.tracer, let parent = state.withLock({ $0.spans[job.key] }) else { return nil }
        return tracer.startSpan("result commit", context: parent.context, ofKind: .client)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Records that `jobs` are starting, then dispatches them. Those no longer this worker's (cancelled or
    /// reaped while they waited) are dropped unrun. Retried through database outages; after `stop()` the
    /// drain gives back whatever is still waiting.
    private func mark(_ jobs: [Job]) async {
        var backoff = Backoff()
        var kept: Set<JobKey>?
        while kept == nil {
            do {
                kept = try await queue.markStarted(jobs)
            } catch {
                if state.withLock({ $0.stopping }) { break }
                logger.warning("recording \(jobs.count) job(s) as started failed, retrying: \(String(reflecting: error))")
                try? await Task.sleep(for: .seconds(backoff.next()))
            }
        }
        let dropped = state.withLock { s -> [Job] in
            s.marking = false
            guard let kept else { return [] }
            var dropped: [Job] = []
            for job in jobs {
                if kept.contains(job.key) {
                    if s.running[job.key] != nil { s.started.insert(job.key) }
                } else if s.running[job.key] != nil, s.controls[job.key] == nil {
                    dropped.append(job)
                }
            }
            removeWaiting(Set(dropped.map(\.key)), from: &s)
            return dropped
        }
        if !dropped.isEmpty {
            logger.info("\(dropped.count) held job(s) were cancelled or reaped before they started: not run")
            metrics.running(runningCount)
            wakeup.signal()
        }
        dispatch()
    }

    /// Drops held jobs no thread has taken from the waiting list and the bookkeeping.
    private func removeWaiting(_ keys: Set<JobKey>, from s: inout State) {
        if keys.isEmpty { return }
        let before = s.waiting[..<s.waitingHead]
        let after = s.waiting[s.waitingHead...].filter { !keys.contains($0.key) }
        s.waiting = Array(before) + after
        for key in keys {
            s.running.removeValue(forKey: key)
            s.started.remove(key)
        }
    }

    /// On the job's pool thread, as it ends. Its thread takes the next waiting job at once; the loop may
    /// claim more while this one's outcome is written (it is woken only if it claims at this level and the
    /// queue was not found drained since the last news of it: waking it for nothing costs more than a
    /// `probe` job). Timed on its thread: a held job's wait is not its duration. If this job was slow enough
    /// to shrink the hold limits and the held jobs that no thread has started would now wait over `longWait`
    /// (each expected to take as long as recent jobs of its recipe), those beyond the limits go back to the
    /// queue at once, for idle workers to take: a worker that had learnt its jobs were short never sits on a
    /// batch of long ones.
    /// Its result may wait for others (`HoldLimits.linger`) only while other held jobs will finish soon.
    private func ran(_ job: Job, _ control: JobControl, _ outcome: JobOutcome, seconds: Double) {
        let (wake, linger, surplus) = state.withLock { s -> (Bool, Double, [Job]) in
            s.onThreads -= 1
            s.controls.removeValue(forKey: job.key)
            s.recording.insert(job.key)
            s.times.record(recipe: job.recipe, seconds: seconds)
            let limits = HoldLimits.limits(concurrency: configuration.concurrency, pace: s.times.pace)
            // Only when the wait is long (a second by the estimate): jobs of mixed lengths shrink the limits
            // often, and giving back 20 short jobs to claim them again costs more than running them.
            let unstarted = s.waiting.count - s.waitingHead
            let over = min(s.unfinished - limits.capacity, unstarted)
            var surplus: [Job] = []
            if over > 0 && s.times.wait(for: s.waiting[s.waitingHead...], threads: configuration.concurrency) > Self.longWait {
                surplus = Array(s.waiting.suffix(over))
                s.waiting.removeLast(over)
                for held in surplus {
                    s.running.removeValue(forKey: held.key)
                    s.started.remove(held.key)
                }
            }
            return (s.stopping || (!s.drained && s.unfinished <= limits.refill), s.unfinished > 0 ? limits.linger : 0, surplus)
        }
        dispatch()
        if !surplus.isEmpty { Task { await giveBack(surplus, why: "they wait behind slower jobs") } }
        if wake { wakeup.signal() }
        switch (control.stopReason, outcome) {
        case (.cancelled, _):
            endSpan(job, outcome: "cancelled")
            Task {
                let message = "cancelled while running; stopped after \(String(format: "%.1f", seconds)) s, nothing written"
                if (try? await queue.noteCancelled(job, message: message)) == true { metrics.cancelled() }
                logger.notice("job \(job.id) (\(job.source)) attempt \(job.attempt): cancelled while running; stopped")
                forget(job)
            }
        case (.lost, _):
            endSpan(job, outcome: "lost")
            logger.warning("job \(job.id): lease lost while it ran; stopped, its outcome dropped")
            forget(job)
        case (.timeout, .failed):
            metrics.timedOut()
            let limit = control.timeoutSeconds
            let commit = commitSpan(job)
            Task {
                await recordFailure(job, code: "timeout", message: "stopped after its timeout of \(Self.format(seconds: limit))",
                                    permanent: false, seconds: seconds)
                commit?.end()
                endSpan(job, outcome: "timeout")
                forget(job)
            }
        case (_, .done(let result)):
            let commit = commitSpan(job)
            completions.add(job, result: result, linger: linger) { [self] written in
                commit?.end()
                endSpan(job, outcome: written == .recorded ? "done" : "not recorded")
                switch written {
                case .recorded:
                    metrics.finished(state: "done", seconds: seconds)
                    forget(job)
                case .lost:
                    logger.warning("job \(job.id): lease lost before it finished; its result was dropped")
                    forget(job)
                case .rejected(let why):
                    Task {
                        await recordFailure(job, code: "internal", message: "PostgreSQL refused the result: \(why)",
                                            permanent: true, seconds: seconds)
                        forget(job)
                    }
                }
            }
        case (_, .failed(let code, let message, let permanent)):
            let commit = commitSpan(job)
            Task {
                await recordFailure(job, code: code, message: message, permanent: permanent, seconds: seconds)
                commit?.end()
                endSpan(job, outcome: code)
                forget(job)
            }
        }
    }

    /// "90 s", "10 min".
    static func format(seconds: Double) -> String {
        seconds >= 120 && seconds.truncatingRemainder(dividingBy: 60) == 0 ? "\(Int(seconds / 60)) min"
            : seconds == seconds.rounded() ? "\(Int(seconds)) s" : String(format: "%.1f s", seconds)
    }

    /// Hands held jobs back to the queue (attempt not counted). If that fails their leases, no longer
    /// renewed, run out and the reaper hands them back instead (attempt counted).
    private func giveBack(_ jobs: [Job], why: String) async {
        var backoff = Backoff()
        while true {
            do {
                let count = try await queue.giveBack(jobs)
                logger.info("gave back \(count) held job(s) no thread had started: \(why)")
                return
            } catch {
                if backoff.attempts >= 5 {
                    logger.warning("giving back \(jobs.count) job(s) failed; their leases will expire: \(String(reflecting: error))")
                    return
                }
                try? await Task.sleep(for: .seconds(backoff.next()))
            }
        }
    }

    /// The job's outcome is written: it is no longer held.
    private func forget(_ job: Job) {
        endSpan(job, outcome: "ended")
        let stopping = state.withLock { s -> Bool in
            s.running.removeValue(forKey: job.key)
            s.recording.remove(job.key)
            s.started.remove(job.key)
            return s.stopping
        }
        metrics.running(runningCount)
        if stopping { wakeup.signal() }
    }

    /// Writes a failure, retrying through database outages (the fencing makes a late write harmless). A
    /// write PostgreSQL refuses is not retried: it is written once more as an `internal` failure, and if that
    /// is refused too, left to the lease.
    private func recordFailure(_ job: Job, code: String, message: String, permanent: Bool, seconds: Double) async {
        var backoff = Backoff()
        let delay = retryDelay(attempt: job.attempt)
        var (code, message, permanent) = (code, message, permanent)
        while true {
            do {
                if let state = try await queue.fail(job, code: code, message: message, permanent: permanent, delay: delay) {
                    metrics.finished(state: state, seconds: seconds)
                    logger.notice("job \(job.id) (\(job.source)) attempt \(job.attempt): \(code): \(message); now \(state)")
                } else {
                    logger.warning("job \(job.id): lease lost before it failed")
                }
                return
            } catch where JobQueue.isRejection(error) {
                logger.error("job \(job.id): PostgreSQL refused its failure: \(JobQueue.describe(error))")
                if code == "internal" { return }
                (code, message, permanent) = ("internal", "PostgreSQL refused the job's outcome: \(JobQueue.describe(error))", true)
            } catch {
                if state.withLock({ $0.stopping }) && backoff.attempts > 50 { return }
                logger.warning("job \(job.id): recording its failure failed, retrying: \(String(reflecting: error))")
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
                        queueChanged()
                        for try await _ in notifications { queueChanged() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.info("LISTEN connection lost, reconnecting: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: .seconds(backoff.next()))
        }
    }

    /// Jobs may have become available (a NOTIFY, a reconnected LISTEN, expired leases reaped): wake the
    /// claim loop, and let finishing jobs wake it again.
    private func queueChanged() {
        state.withLock { s in
            s.news += 1
            s.drained = false
        }
        wakeup.signal()
    }

    /// The fallback for a lost NOTIFY: wakes the claim loop every poll interval.
    private func poll() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(configuration.pollSeconds))
            wakeup.signal()
        }
    }

    /// Reaps other workers' expired leases every third of the lease, and refreshes the queue gauges. Renewals
    /// are not in here (`renewLeases`): a slow count or reap delayed them past the lease.
    private func beat() async {
        let period = max(configuration.leaseSeconds / 3, 0.05)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(period))
            do {
                let reaped = try await queue.reapExpired()
                if reaped > 0 {
                    metrics.reaped(reaped)
                    logger.info("\(reaped) job(s) whose lease expired went back to the queue")
                    queueChanged()
                }
                metrics.states(try await queue.countsByState())
            } catch {
                if Task.isCancelled { return }
                logger.warning("heartbeat failed: \(String(reflecting: error))")
            }
        }
    }

    /// Deletes finished rows past their retention, at start and every `retention.intervalSeconds`, over a
    /// connection of the pool (one worker of all prunes at a time: `Retention.prune`).
    private func prune() async {
        let retention = configuration.retention
        if retention.keepDoneSeconds <= 0 && retention.keepFailedSeconds <= 0 { return }
        while !Task.isCancelled {
            do {
                let outcome = try await client.withConnection { [logger, metrics] connection in
                    try await retention.prune(connection: connection, logger: logger) { metrics.pruned($0) }
                }
                if outcome.total > 0 {
                    logger.info("pruned \(outcome.total) finished row(s) in \(outcome.batches) batch(es), \(String(format: "%.1f", outcome.seconds)) s")
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("pruning finished rows failed: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: .seconds(retention.intervalSeconds))
        }
    }

    /// Renews this worker's leases every third of the lease, on a connection of its own that nothing else
    /// uses, so no other statement of this worker can hold a renewal up.
    private func renewLeases() async {
        let period = max(configuration.leaseSeconds / 3, 0.05)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(period))
            if Task.isCancelled { return }
            await renewOnce()
        }
    }

    /// One renewal of every held job's lease. Jobs found cancelled stop (on a thread: at their next frame;
    /// waiting: never started); jobs found no longer this worker's (reaped during an outage longer than the
    /// lease) stop too, their outcome dropped.
    private func renewOnce() async {
        let held = state.withLock { s in s.running.keys.filter { !s.recording.contains($0) } }
        if held.isEmpty { return }
        let renewal: JobQueue.Renewal
        do {
            renewal = try await queue.renew(held, lease: configuration.leaseSeconds)
        } catch {
            logger.warning("renewing \(held.count) lease(s) failed: \(String(reflecting: error))")
            return
        }
        metrics.renewed(renewal.renewed.count)
        let missing = held.filter { !renewal.renewed.contains($0) }
        if missing.isEmpty { return }
        let (stopped, dropped) = state.withLock { s -> ([(Job, JobControl.Reason)], [Job]) in
            var stopped: [(Job, JobControl.Reason)] = []
            var dropped: [Job] = []
            for key in missing where s.running[key] != nil && !s.recording.contains(key) {
                let why: JobControl.Reason = renewal.cancelled.contains(key) ? .cancelled : .lost
                if let (job, control) = s.controls[key] {
                    if control.stop(why) { stopped.append((job, why)) }
                } else if let job = s.running[key], s.waiting[s.waitingHead...].contains(where: { $0.key == key }) {
                    dropped.append(job)
                }
            }
            removeWaiting(Set(dropped.map(\.key)), from: &s)
            return (stopped, dropped)
        }
        for (job, why) in stopped {
            logger.notice("job \(job.id) (\(job.source)): \(why == .cancelled ? "cancelled" : "no longer this worker's"); stopping it")
        }
        if !dropped.isEmpty {
            logger.notice("\(dropped.count) held job(s) cancelled or reaped before they started: not run")
            metrics.running(runningCount)
            wakeup.signal()
        }
    }

    /// Stops jobs that run past their timeout (checked twice a second), and takes a job whose work has not
    /// stopped `stuckSeconds` after that for stuck: the worker stops claiming and `run` returns `wedged`.
    private func watch() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            let now = ContinuousClock.now
            let (expired, stuck) = state.withLock { s -> ([Job], [Job]) in
                var expired: [Job] = [], stuck: [Job] = []
                for (job, control) in s.controls.values {
                    if now >= control.deadline {
                        if control.stop(.timeout) {
                            expired.append(job)
                        } else if control.stopReason == .timeout && now >= control.deadline + .seconds(configuration.stuckSeconds) {
                            stuck.append(job)
                        }
                    }
                }
                if !stuck.isEmpty && !s.wedged {
                    s.wedged = true
                    s.stopping = true
                } else {
                    stuck = []
                }
                return (expired, stuck)
            }
            for job in expired {
                logger.notice("job \(job.id) (\(job.source)): past its timeout of \(Self.format(seconds: timeout(for: job))); stopping it")
            }
            if !stuck.isEmpty {
                logger.critical("job(s) \(stuck.map { String($0.id) }.joined(separator: ", ")) did not stop within \(Self.format(seconds: configuration.stuckSeconds)) of their timeout: no more claims; exiting once they are recorded")
                wakeup.signal()
            }
        }
    }

    /// After stop: give back the held jobs no thread has started, wait up to the grace period for the running
    /// ones (renewing their leases), then give back the rest. A wedged worker waits for nothing: its stuck jobs
    /// are recorded `timeout`, the others given back, and the process exits.
    private func drain() async {
        let unstarted = state.withLock { s -> [Job] in
            let jobs = Array(s.waiting[s.waitingHead...])
            s.waiting = []
            s.waitingHead = 0
            for job in jobs {
                s.running.removeValue(forKey: job.key)
                s.started.remove(job.key)
            }
            return jobs
        }
        if !unstarted.isEmpty { await giveBack(unstarted, why: "stopping") }
        if wedged {
            let (stuck, others) = state.withLock { s -> ([(Job, JobControl)], [Job]) in
                let stuck = s.controls.values.filter { $0.control.stopReason == .timeout }.map { ($0.job, $0.control) }
                let keys = Set(stuck.map(\.0.key))
                return (stuck, s.running.values.filter { !keys.contains($0.key) && !s.recording.contains($0.key) })
            }
            for (job, control) in stuck {
                await recordFailure(job, code: "timeout", message: "stopped after its timeout of \(Self.format(seconds: control.timeoutSeconds)); its work did not stop, so the worker exited",
                                    permanent: false, seconds: Self.seconds(.now - control.started))
            }
            if !others.isEmpty { _ = try? await queue.giveBack(others) }
            return
        }
        // The renewals go on meanwhile (`renewLeases` stops after this returns).
        let deadline = ContinuousClock.now + .seconds(configuration.graceSeconds)
        while runningCount > 0 && ContinuousClock.now < deadline {
            await wakeup.wait(seconds: 0.1)
        }
        let left = state.withLock { Array($0.running.values) }
        if !left.isEmpty {
            logger.notice("grace period over: giving back \(left.count) job(s)")
            _ = try? await queue.giveBack(left)
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
