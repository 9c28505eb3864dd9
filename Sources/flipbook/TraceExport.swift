import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Trace export for `worker` and `serve`: OTLP over HTTP (protobuf) when the standard
/// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, with swift-otel's reading of
/// the other standard variables (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` and `_ARG`, headers, timeout).
/// Otherwise nothing: no tracer, so the libraries make no span and allocate nothing for one. The tracer is
/// handed to the libraries; nothing is bootstrapped process-wide.
struct TraceExport {
    let tracer: any Tracer
    private let group: ServiceGroup
    private let running: Task<Void, Never>

    /// Whether the environment asks for export.
    static func requested(_ environment: [String: String]) -> Bool {
        let set = { (name: String) in !(environment[name] ?? "").isEmpty }
        let disabled = environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" || environment["OTEL_TRACES_EXPORTER"] == "none"
        return !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    }

    /// Starts the exporter's background work (batching, HTTP) if the environment asks for export; nil otherwise.
    /// `serviceName` is the default for `OTEL_SERVICE_NAME`.
    static func start(serviceName: String, environment: [String: String], logger: Logger) throws -> TraceExport? {
        guard requested(environment) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.diagnosticLogger = .custom(logger)
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        let group = ServiceGroup(services: [backend.service], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        let running = Task { do { try await group.run() } catch { logger.warning("trace export stopped: \(error)") } }
        return TraceExport(tracer: backend.factory, group: group, running: running)
    }

    /// Exports what is still batched, then stops.
    func finish() async {
        await group.triggerGracefulShutdown()
        await running.value
    }
}
