import Synchronization

/// One place every decode and encode loop asks "should I stop?": the current Swift task's cancellation,
/// the process-wide token a command-line tool sets from its SIGINT handler, or a caller's own token
/// (a server's per-job flag) bound with `watching`. Checking costs an atomic load, a task-local lookup
/// and the caller's closure, so loops check once per frame, packet or row band, never per pixel.
public enum Cancellation {
    private static let requested = Atomic<Bool>(false)
    /// The innermost `watching` closure, if any; bound per task, or per thread outside tasks.
    @TaskLocal private static var token: (@Sendable () -> Bool)?

    /// Asks every running decode and encode in this process to stop at its next check. Async-signal-safe
    /// (a single atomic store), so a SIGINT handler may call it.
    public static func requestStop() { requested.store(true, ordering: .relaxed) }

    /// Whether the current task was cancelled, a stop was requested, or the `watching` token says stop.
    public static var isRequested: Bool {
        Task.isCancelled || requested.load(ordering: .relaxed) || token?() == true
    }

    /// Throws `FlipbookError(.cancelled)` if the work should stop; `what` names it in the message.
    public static func check(_ what: @autoclosure () -> String = "the work") throws {
        if isRequested { throw FlipbookError(.cancelled, "\(what()) was cancelled") }
    }

    /// Runs `body` with `isCancelled` as one more reason to stop, seen by every check made inside it (the
    /// same thread or task, and what it calls synchronously): work on a thread of its own, where there is
    /// no task to cancel, becomes cancellable with a flag. Costs one task-local binding.
    public static func watching<T>(_ isCancelled: @escaping @Sendable () -> Bool, _ body: () throws -> T) rethrows -> T {
        let outer = token
        return try $token.withValue({ isCancelled() || outer?() == true }, operation: body)
    }
}
