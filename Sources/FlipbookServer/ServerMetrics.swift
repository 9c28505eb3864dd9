import CoreMetrics
import FlipbookService
import Prometheus

/// The server's metrics, through swift-metrics with a swift-prometheus factory owned by this server (not
/// the process-wide bootstrap, so several servers in one test process keep separate counts).
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets: [Duration] = [.milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                                   .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
                                   .seconds(5), .seconds(10), .seconds(30)]
        factory.defaultDurationHistogramBuckets = buckets
        self.factory = factory
        // Zero counters for every job kind, so the series exist before the first job.
        for kind in ["mp4", "thumb", "poster", "preview", "storyboard"] {
            Counter(label: "flipbook_jobs_total", dimensions: [("kind", kind)], factory: factory).increment(by: 0)
        }
    }

    func request(route: String, status: Int, seconds: Double, bytes: Int) {
        Counter(label: "flipbook_http_requests_total", dimensions: [("route", route), ("code", String(status))], factory: factory).increment()
        Counter(label: "flipbook_http_responses_total", dimensions: [("code", String(status))], factory: factory).increment()
        Counter(label: "flipbook_http_response_bytes_total", dimensions: [("route", route)], factory: factory).increment(by: Int64(bytes))
        Timer(label: "flipbook_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(Int64(seconds * 1e9))
    }

    func inFlight(_ delta: Int, total: Int) {
        Gauge(label: "flipbook_http_in_flight", factory: factory).record(total)
    }

    func event(_ event: DerivativeService.ServiceEvent) {
        switch event {
        case .job(let kind, let seconds, let failed):
            Counter(label: "flipbook_jobs_total", dimensions: [("kind", kind)], factory: factory).increment()
            if failed { Counter(label: "flipbook_job_failures_total", dimensions: [("kind", kind)], factory: factory).increment() }
            Timer(label: "flipbook_job_duration_seconds", dimensions: [("kind", kind)], factory: factory).recordNanoseconds(Int64(seconds * 1e9))
        case .cache(let outcome):
            switch outcome {
            case .memory, .disk: Counter(label: "flipbook_cache_hits_total", dimensions: [("cache", outcome.rawValue)], factory: factory).increment()
            case .miss: Counter(label: "flipbook_cache_misses_total", factory: factory).increment()
            }
        }
    }

    func gauges(service: DerivativeService) {
        let depth = service.queueDepth
        Gauge(label: "flipbook_queue_depth", factory: factory).record(depth.waiting)
        Gauge(label: "flipbook_jobs_in_flight", factory: factory).record(depth.running)
        let usage = service.memoryCacheUsage
        Gauge(label: "flipbook_memory_cache_bytes", factory: factory).record(usage.bytes)
        Gauge(label: "flipbook_memory_cache_entries", factory: factory).record(usage.count)
    }

    /// Prometheus text exposition of everything above.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
