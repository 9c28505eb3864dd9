import Synchronization
import Tracing

/// What a running job's work polls to learn it should stop, and why: its `--job-timeout` passed, the job was
/// cancelled (`state = 'cancelled'`), or this worker no longer holds it (its lease was lost). One per job on
/// a thread; the runner hands `isCancelled` to the pipelines, which check it between frames and reads.
public final class JobControl: Sendable {
    /// Why a job's work was asked to stop.
    public enum Reason: UInt8, Sendable {
        case none = 0
        /// It ran past its timeout: recorded `timeout` (retryable).
        case timeout = 1
        /// An operator or the app set its state to `cancelled`.
        case cancelled = 2
        /// Its lease is no longer this worker's (reaped after an outage): its result would be discarded.
        case lost = 3
    }

    private let reason = Atomic<UInt8>(0)
    /// When its work started on a thread, and how long it may take.
    let started: ContinuousClock.Instant
    let timeoutSeconds: Double
    /// The job's span's context, for the work's own spans (nil when the worker has no tracer).
    public let trace: ServiceContext?

    init(timeoutSeconds: Double, started: ContinuousClock.Instant = .now, trace: ServiceContext? = nil) {
        self.timeoutSeconds = timeoutSeconds
        self.started = started
        self.trace = trace
    }

    /// A control nothing stops (for running a job outside a worker).
    public convenience init() { self.init(timeoutSeconds: .infinity) }

    /// Whether the work should stop: one atomic load.
    public var isCancelled: Bool { reason.load(ordering: .relaxed) != 0 }

    /// Why it should stop (`.none` while it should not).
    public var stopReason: Reason { Reason(rawValue: reason.load(ordering: .relaxed)) ?? .none }

    /// Asks the work to stop for `why`; the first reason given is kept. Returns whether this call set it.
    @discardableResult
    func stop(_ why: Reason) -> Bool {
        reason.compareExchange(expected: 0, desired: why.rawValue, ordering: .relaxed).exchanged
    }

    /// When it runs past its timeout.
    var deadline: ContinuousClock.Instant {
        timeoutSeconds.isFinite ? started + .seconds(timeoutSeconds) : started + .seconds(86_400 * 365)
    }
}
