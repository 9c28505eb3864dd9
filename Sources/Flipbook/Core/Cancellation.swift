import Synchronization

/// One place every decode and encode loop asks "should I stop?": the current Swift task's cancellation,
/// or the process-wide token a command-line tool sets from its SIGINT handler. Checking costs an atomic
/// load and a task-local lookup, so loops check once per frame (or per row band), never per pixel.
public enum Cancellation {
    private static let requested = Atomic<Bool>(false)

    /// Asks every running decode and encode in this process to stop at its next check. Async-signal-safe
    /// (a single atomic store), so a SIGINT handler may call it.
    public static func requestStop() { requested.store(true, ordering: .relaxed) }

    /// Whether the current task was cancelled or a stop was requested.
    public static var isRequested: Bool { Task.isCancelled || requested.load(ordering: .relaxed) }

    /// Throws `FlipbookError(.cancelled)` if the work should stop; `what` names it in the message.
    public static func check(_ what: @autoclosure () -> String = "the work") throws {
        if isRequested { throw FlipbookError(.cancelled, "\(what()) was cancelled") }
    }
}
