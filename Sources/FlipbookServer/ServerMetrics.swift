import CoreMetrics
import FlipbookService
import Prometheus
import Synchronization

/// The server's metrics, through swift-metrics with a swift-prometheus factory owned by this server (not
/// the process-wide bootstrap, so several servers in one test process keep separate counts).
///
/// Handles are made once per series and kept: making one goes through the registry's lock and builds its
/// label key, which cost more than the rest of a memory-cache hit when it happened on every request.
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    /// The fetch and S3 counters of the service's sources, copied in at each scrape.
    private let sources: SourceCounterExport

    /// The four series a request updates, for one route and status (a class: one reference to take out of
    /// the table per request, not four).
    private final class RequestSeries: Sendable {
        let requests: CoreMetrics.Counter
        let responses: CoreMetrics.Counter
        let bytes: CoreMetrics.Counter
        let duration: CoreMetrics.Timer

        init(requests: CoreMetrics.Counter, responses: CoreMetrics.Counter, bytes: CoreMetrics.Counter, duration: CoreMetrics.Timer) {
            self.requests = requests
            self.responses = responses
            self.bytes = bytes
            self.duration = duration
        }
    }

    private struct RequestKey: Hashable {
        let route: String
        let status: Int

        /// The status, the route's length and first byte: enough to tell the few routes apart (`==` compares
        /// the whole route), without hashing the route's text on every request.
        func hash(into hasher: inout Hasher) {
            hasher.combine(status &* 64 &+ route.utf8.count)
            hasher.combine(route.utf8.first ?? 0)
        }
    }

    private let requestSeries = Mutex<[RequestKey: RequestSeries]>([:])
    /// The same series for the media routes and the statuses a memory-cache hit answers with, by index
    /// (route, status slot): a hit takes them out of an array instead of a hash table.
    private let mediaSeries = Mutex<[RequestSeries?]>(Array(repeating: nil, count: MediaRoute.allCases.count * ServerMetrics.hitSlots))
    private static let hitSlots = 5

    /// 200, 206, 304, 412 and 416: 0 to 4.
    private static func hitSlot(_ status: Int) -> Int? {
        switch status {
        case 200: 0
        case 206: 1
        case 304: 2
        case 412: 3
        case 416: 4
        default: nil
        }
    }
    private let jobSeries = Mutex<[String: (jobs: CoreMetrics.Counter, failures: CoreMetrics.Counter, duration: CoreMetrics.Timer)]>([:])
    private let inFlightGauge: CoreMetrics.Gauge
    private let memoryHits: CoreMetrics.Counter
    private let diskHits: CoreMetrics.Counter
    private let misses: CoreMetrics.Counter
    private let queueDepthGauge: CoreMetrics.Gauge
    private let jobsInFlightGauge: CoreMetrics.Gauge
    private let memoryBytesGauge: CoreMetrics.Gauge
    private let memoryEntriesGauge: CoreMetrics.Gauge

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets: [Duration] = [.milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                                   .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
                                   .seconds(5), .seconds(10), .seconds(30)]
        factory.defaultDurationHistogramBuckets = buckets
        self.factory = factory
        sources = SourceCounterExport(registry: registry)
        inFlightGauge = CoreMetrics.Gauge(label: "flipbook_http_in_flight", factory: factory)
        memoryHits = CoreMetrics.Counter(label: "flipbook_cache_hits_total", dimensions: [("cache", "memory")], factory: factory)
        diskHits = CoreMetrics.Counter(label: "flipbook_cache_hits_total", dimensions: [("cache", "disk")], factory: factory)
        misses = CoreMetrics.Counter(label: "flipbook_cache_misses_total", factory: factory)
        queueDepthGauge = CoreMetrics.Gauge(label: "flipbook_queue_depth", factory: factory)
        jobsInFlightGauge = CoreMetrics.Gauge(label: "flipbook_jobs_in_flight", factory: factory)
        memoryBytesGauge = CoreMetrics.Gauge(label: "flipbook_memory_cache_bytes", factory: factory)
        memoryEntriesGauge = CoreMetrics.Gauge(label: "flipbook_memory_cache_entries", factory: factory)
        // Zero counters for every job kind, so the series exist before the first job.
        for kind in ["mp4", "thumb", "poster", "preview", "storyboard"] {
            jobs(kind).jobs.increment(by: 0)
        }
    }

    func request(route: String, status: Int, seconds: Double, bytes: Int) {
        record(series(route: route, status: status), seconds: seconds, bytes: bytes)
    }

    /// The same for a media route.
    func request(route: MediaRoute, status: Int, seconds: Double, bytes: Int) {
        guard let slot = Self.hitSlot(status) else { return request(route: route.name, status: status, seconds: seconds, bytes: bytes) }
        let index = route.rawValue * Self.hitSlots + slot
        let series = mediaSeries.withLock { table in
            if let series = table[index] { return series }
            let series = self.series(route: route.name, status: status)
            table[index] = series
            return series
        }
        record(series, seconds: seconds, bytes: bytes)
    }

    private func series(route: String, status: Int) -> RequestSeries {
        let key = RequestKey(route: route, status: status)
        return requestSeries.withLock { table in
            if let series = table[key] { return series }
            let series = RequestSeries(
                requests: CoreMetrics.Counter(label: "flipbook_http_requests_total", dimensions: [("route", route), ("code", String(status))], factory: factory),
                responses: CoreMetrics.Counter(label: "flipbook_http_responses_total", dimensions: [("code", String(status))], factory: factory),
                bytes: CoreMetrics.Counter(label: "flipbook_http_response_bytes_total", dimensions: [("route", route)], factory: factory),
                duration: CoreMetrics.Timer(label: "flipbook_http_request_duration_seconds", dimensions: [("route", route)], factory: factory))
            table[key] = series
            return series
        }
    }

    private func record(_ series: RequestSeries, seconds: Double, bytes: Int) {
        series.requests.increment()
        series.responses.increment()
        series.bytes.increment(by: Int64(bytes))
        series.duration.recordNanoseconds(Int64(seconds * 1e9))
    }

    func inFlight(_ delta: Int, total: Int) {
        inFlightGauge.record(total)
    }

    private func jobs(_ kind: String) -> (jobs: CoreMetrics.Counter, failures: CoreMetrics.Counter, duration: CoreMetrics.Timer) {
        jobSeries.withLock { table in
            if let series = table[kind] { return series }
            let series = (jobs: CoreMetrics.Counter(label: "flipbook_jobs_total", dimensions: [("kind", kind)], factory: factory),
                          failures: CoreMetrics.Counter(label: "flipbook_job_failures_total", dimensions: [("kind", kind)], factory: factory),
                          duration: CoreMetrics.Timer(label: "flipbook_job_duration_seconds", dimensions: [("kind", kind)], factory: factory))
            table[kind] = series
            return series
        }
    }

    func event(_ event: DerivativeService.ServiceEvent) {
        switch event {
        case .job(let kind, let seconds, let failed):
            let series = jobs(kind)
            series.jobs.increment()
            if failed { series.failures.increment() }
            series.duration.recordNanoseconds(Int64(seconds * 1e9))
        case .cache(let outcome):
            switch outcome {
            case .memory: memoryHits.increment()
            case .disk: diskHits.increment()
            case .miss: misses.increment()
            }
        }
    }

    func gauges(service: DerivativeService) {
        sources.update(fetch: service.configuration.remoteSources?.counters, s3: service.configuration.s3Client?.counters)
        let depth = service.queueDepth
        queueDepthGauge.record(depth.waiting)
        jobsInFlightGauge.record(depth.running)
        let usage = service.memoryCacheUsage
        memoryBytesGauge.record(usage.bytes)
        memoryEntriesGauge.record(usage.count)
    }

    /// Prometheus text exposition of everything above.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
