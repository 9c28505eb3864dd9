import CoreMetrics
import FlipbookStorage
import Prometheus
import Synchronization

/// Copies the counters of remote fetches (`FetchCounters`) and of an S3 client (`S3Counters`) into a Prometheus
/// registry, for the server's and the worker's `/metrics`: `flipbook_source_fetches_total`,
/// `flipbook_source_fetch_bytes_total`, `flipbook_source_fetch_refusals_total{reason}`,
/// `flipbook_s3_requests_total{operation}`, `flipbook_s3_retries_total` and `flipbook_s3_bytes_total{direction}`.
/// Each `update` adds what moved since the last one, so the Prometheus counters only go forward. Called at
/// scrape time; each series that moved costs a handle made through the registry's lock.
package final class SourceCounterExport: Sendable {
    private struct Seen {
        var fetches = 0
        var fetchBytes = 0
        var refusals: [String: Int] = [:]
        var s3Requests: [String: Int] = [:]
        var s3Retries = 0
        var s3Sent = 0
        var s3Received = 0
    }

    private let factory: PrometheusMetricsFactory
    private let seen = Mutex(Seen())

    /// An export into `registry`.
    package init(registry: PrometheusCollectorRegistry) { factory = PrometheusMetricsFactory(registry: registry) }

    /// Adds what `fetch` and `s3` counted since the last call (either may be absent: no URL sources, no S3).
    package func update(fetch: FetchCounters?, s3: S3Counters?) {
        seen.withLock { seen in
            func add(_ label: String, _ delta: Int, _ dimensions: [(String, String)] = []) {
                guard delta > 0 else { return }
                CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory).increment(by: delta)
            }
            if let fetch {
                let now = fetch.snapshot
                add("flipbook_source_fetches_total", now.fetches - seen.fetches)
                add("flipbook_source_fetch_bytes_total", now.bytes - seen.fetchBytes)
                for (reason, count) in now.refusals {
                    add("flipbook_source_fetch_refusals_total", count - seen.refusals[reason, default: 0], [("reason", reason)])
                }
                (seen.fetches, seen.fetchBytes, seen.refusals) = (now.fetches, now.bytes, now.refusals)
            }
            if let s3 {
                let now = s3.snapshot
                for (operation, count) in now.requests {
                    add("flipbook_s3_requests_total", count - seen.s3Requests[operation, default: 0], [("operation", operation)])
                }
                add("flipbook_s3_retries_total", now.retries - seen.s3Retries)
                add("flipbook_s3_bytes_total", now.sent - seen.s3Sent, [("direction", "sent")])
                add("flipbook_s3_bytes_total", now.received - seen.s3Received, [("direction", "received")])
                (seen.s3Requests, seen.s3Retries, seen.s3Sent, seen.s3Received) = (now.requests, now.retries, now.sent, now.received)
            }
        }
    }
}
