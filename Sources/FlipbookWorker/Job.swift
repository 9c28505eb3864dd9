/// A claimed row of `flipbook.jobs`.
public struct Job: Sendable, Equatable {
    public var id: Int64
    /// A path relative to the worker's root.
    public var source: String
    public var recipe: String
    /// Including this one.
    public var attempt: Int
    public var maxAttempts: Int
    /// Higher runs first, within a claim as across the queue.
    public var priority = 0
    /// The W3C `traceparent` the app stored with the job (column `trace_context`), if any.
    public var traceContext: String?
    /// When the app enqueued it (`created_at`), in seconds since 1970: where the job's span begins.
    public var enqueuedAt: Double?

    public init(id: Int64, source: String, recipe: String, attempt: Int, maxAttempts: Int, priority: Int = 0,
                traceContext: String? = nil) {
        self.id = id
        self.source = source
        self.recipe = recipe
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.priority = priority
        self.traceContext = traceContext
    }

    /// The job's row and attempt: what the worker's bookkeeping and every fenced write are keyed by. A job given
    /// back and claimed again by the same worker is another key.
    var key: JobKey { JobKey(id: id, attempt: attempt) }
}

/// A job's id and attempt.
struct JobKey: Hashable, Sendable {
    var id: Int64
    var attempt: Int
}

/// How running a job ended.
public enum JobOutcome: Sendable, Equatable {
    /// `result` is one JSON object; it goes into the `result` jsonb column.
    case done(result: String)
    /// `code` and `message` go into the `error` column. Permanent failures are not retried.
    case failed(code: String, message: String, permanent: Bool)
}

/// Runs one job on a thread of its own (blocking is fine: the worker never calls it on the cooperative pool).
/// The work should poll `JobControl.isCancelled` between frames and stop when it says so.
public typealias JobRunner = @Sendable (Job, JobControl) -> JobOutcome
