/// A claimed row of `flipbook.jobs`.
public struct Job: Sendable, Equatable {
    public var id: Int64
    /// A path relative to the worker's root.
    public var source: String
    public var recipe: String
    /// Including this one.
    public var attempt: Int
    public var maxAttempts: Int
}

/// How running a job ended.
public enum JobOutcome: Sendable, Equatable {
    /// `result` is one JSON object; it goes into the `result` jsonb column.
    case done(result: String)
    /// `code` and `message` go into the `error` column. Permanent failures are not retried.
    case failed(code: String, message: String, permanent: Bool)
}

/// Runs one job on a thread of its own (blocking is fine: the worker never calls it on the cooperative pool).
public typealias JobRunner = @Sendable (Job) -> JobOutcome
