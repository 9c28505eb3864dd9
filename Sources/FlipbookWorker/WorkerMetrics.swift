import CoreMetrics
import Prometheus
import Synchronization

/// The worker's Prometheus series, in a registry it owns (several workers in one process keep their own).
public final class WorkerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let done: CoreMetrics.Counter
    private let failed: CoreMetrics.Counter
    private let retries: CoreMetrics.Counter
    private let renewals: CoreMetrics.Counter
    private let expired: CoreMetrics.Counter
    private let claimsWithJobs: CoreMetrics.Counter
    private let claimsEmpty: CoreMetrics.Counter
    private let cancelledJobs: CoreMetrics.Counter
    private let timeouts: CoreMetrics.Counter
    private let duration: CoreMetrics.Timer
    private let running: CoreMetrics.Gauge
    private let stateGauges: [String: CoreMetrics.Gauge]
    private let prunedRows: [String: CoreMetrics.Counter]

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
                                                   .milliseconds(250), .seconds(1), .seconds(2.5), .seconds(10), .seconds(30), .seconds(120)]
        self.factory = factory
        done = CoreMetrics.Counter(label: "flipbook_worker_jobs_total", dimensions: [("outcome", "done")], factory: factory)
        failed = CoreMetrics.Counter(label: "flipbook_worker_jobs_total", dimensions: [("outcome", "failed")], factory: factory)
        retries = CoreMetrics.Counter(label: "flipbook_worker_retries_total", factory: factory)
        renewals = CoreMetrics.Counter(label: "flipbook_worker_lease_renewals_total", factory: factory)
        expired = CoreMetrics.Counter(label: "flipbook_worker_leases_expired_total", factory: factory)
        // Claims that found nothing are the cost of an idle or drained queue: one per poll or NOTIFY, not one per job.
        claimsWithJobs = CoreMetrics.Counter(label: "flipbook_worker_claims_total", dimensions: [("found", "jobs")], factory: factory)
        claimsEmpty = CoreMetrics.Counter(label: "flipbook_worker_claims_total", dimensions: [("found", "none")], factory: factory)
        cancelledJobs = CoreMetrics.Counter(label: "flipbook_worker_jobs_total", dimensions: [("outcome", "cancelled")], factory: factory)
        timeouts = CoreMetrics.Counter(label: "flipbook_worker_timeouts_total", factory: factory)
        duration = CoreMetrics.Timer(label: "flipbook_worker_job_duration_seconds", factory: factory)
        running = CoreMetrics.Gauge(label: "flipbook_worker_running", factory: factory)
        var gauges: [String: CoreMetrics.Gauge] = [:]
        for state in ["available", "running", "done", "failed", "cancelled"] {
            gauges[state] = CoreMetrics.Gauge(label: "flipbook_queue_jobs", dimensions: [("state", state)], factory: factory)
        }
        stateGauges = gauges
        var pruned: [String: CoreMetrics.Counter] = [:]
        for state in ["done", "failed", "cancelled"] {
            pruned[state] = CoreMetrics.Counter(label: "flipbook_queue_pruned_total", dimensions: [("state", state)], factory: factory)
            pruned[state]?.increment(by: 0)
        }
        prunedRows = pruned
        for counter in [done, failed, retries, renewals, expired, claimsWithJobs, claimsEmpty, cancelledJobs, timeouts] {
            counter.increment(by: 0)
        }
    }

    func finished(state: String, seconds: Double) {
        switch state {
        case "done": done.increment()
        case "failed": failed.increment()
        default: retries.increment()
        }
        duration.recordNanoseconds(Int64(seconds * 1e9))
    }

    /// Finished rows this worker's retention deleted, by state.
    func pruned(_ byState: [String: Int]) {
        for (state, count) in byState { prunedRows[state]?.increment(by: Int64(count)) }
    }

    /// Adds the `flipbook_build_info` gauge (value 1) with `labels` (the executable's versions; the library
    /// does not look them up itself).
    public func recordBuildInfo(_ labels: [(String, String)]) {
        registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "flipbook", metricName: "build", unitName: "info",
            helpText: "Flipbook's version and the C libraries' (always 1)"), labels: labels).set(1.0 as Double)
    }

    /// A running job stopped because it was cancelled.
    func cancelled() { cancelledJobs.increment() }
    /// A job's work was stopped at its timeout.
    func timedOut() { timeouts.increment() }

    func claimed(_ count: Int) { (count > 0 ? claimsWithJobs : claimsEmpty).increment() }
    func renewed(_ count: Int) { renewals.increment(by: Int64(count)) }
    func reaped(_ count: Int) { expired.increment(by: Int64(count)) }
    func running(_ count: Int) { running.record(count) }

    /// The table's rows by state; `available` is the queue depth.
    func states(_ counts: [String: Int]) {
        for (state, gauge) in stateGauges { gauge.record(counts[state] ?? 0) }
    }

    /// Prometheus text exposition.
    public func exposition() -> [UInt8] { registry.emitToBuffer() }
}
