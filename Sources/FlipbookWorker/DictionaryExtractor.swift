import Tracing

/// Reads trace headers (`traceparent`, `tracestate`) from a dictionary: a job's stored `trace_context`.
struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}
