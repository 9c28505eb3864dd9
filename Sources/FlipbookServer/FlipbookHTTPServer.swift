import Flipbook
import FlipbookGallery
import FlipbookService
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Tracing
#if canImport(Glibc)
import Glibc
#endif

/// `flipbook serve`: a thin Hummingbird 2 adapter over `DerivativeService`. It parses the raw request
/// target itself (no router normalisation, so signatures cover exactly what was sent and no dot-segment
/// is ever resolved), checks the signature, asks the service, and answers with RFC 9110 ranges and
/// conditionals from `ByteRanges` and `Conditionals`.
public final class FlipbookHTTPServer: Sendable {
    /// How the server runs. Every property documents its default.
    public struct Configuration: Sendable {
        /// The derivative service's configuration (root, caches, workers).
        public var service: DerivativeService.Configuration
        /// Address to bind. Default 127.0.0.1 (loopback only).
        public var host = "127.0.0.1"
        /// Port (0: an ephemeral port, reported to `onRunning`). Default 8080.
        public var port = 8080
        /// Checks `sig` on every request but /health and /metrics when set. Default nil (no signing).
        public var signer: URLSigner?
        /// Seconds to finish in-flight requests after SIGTERM/SIGINT. Default 10.
        public var shutdownGraceSeconds = 10
        /// `Cache-Control` on media responses. Default "public, max-age=86400": derivatives change only
        /// when their source does, and the ETag revalidates.
        public var cacheControl = "public, max-age=86400"
        /// Cancel a job nobody else waits for when its client disconnects. Default true.
        public var cancelOnDisconnect = true
        /// How long a keep-alive connection may wait for its next request before the server closes it.
        /// Default 75 s (nginx's `keepalive_timeout`).
        public var idleTimeout: Duration = .seconds(75)
        /// Where request spans go, each continuing the request's W3C `traceparent`. Default nil: no spans,
        /// and memory-cache hits are answered on the event loop. With a tracer every request goes through
        /// `handle`, which makes its span.
        public var tracer: (any Tracer)?

        /// A configuration serving `root` with every other default.
        public init(root: String) { service = DerivativeService.Configuration(root: root) }
    }

    public let configuration: Configuration
    public let service: DerivativeService
    public let metrics: ServerMetrics
    /// `/gallery` and `/list` (Gallery/GalleryRoutes.swift).
    let gallery: Gallery
    let logger: Logger
    private let inFlight = Atomic<Int>(0)
    private let eventLoopAnswers = Atomic<Int>(0)
    let fileAnswers = Atomic<Int>(0)
    /// The Date header, formatted once a second.
    let date = HTTPDate()
    /// `configuration.cacheControl` as a header value (legalised once, as `HTTPField` would each time).
    let cacheControl: String

    /// Requests answered from the memory cache on the event loop, before Hummingbird's responder (the rest
    /// went through `handle`). Tests use it to tell which path answered.
    public var answeredOnEventLoop: Int { eventLoopAnswers.load(ordering: .relaxed) }

    /// Of those, the answers whose body went out with `sendfile` from the disk cache.
    public var answeredWithSendfile: Int { fileAnswers.load(ordering: .relaxed) }

    /// Builds the service (threads, caches) and the metrics. Throws if the root or disk cache is unusable.
    public init(configuration: Configuration, logger: Logger = Logger(label: "flipbook.serve")) throws {
        var configuration = configuration
        let metrics = ServerMetrics()
        if let signer = configuration.signer {
            // Storyboards reference their sheets by signed URLs; the tag keeps differently signed WebVTT
            // files apart in a shared disk cache.
            configuration.service.storyboardSheetURL = { path, n in signer.sign("/storyboard/\(path).sheet-\(n).jpg") }
            configuration.service.storyboardURLTag = "signed:" + signer.signature(for: "storyboard-tag")
            configuration.service.remoteStoryboardSheetURL = { url, n in signer.sign("/storyboard?url=\(url)&sheet=\(n)") }
        }
        // A server that fetches URLs for anyone who asks is an open proxy into its own network: URLs are only
        // taken in signed requests.
        if configuration.service.remoteSources != nil, configuration.signer == nil {
            throw FlipbookError(.invalidArgument, "remote sources need signing: give a key and a salt (--key and --salt)")
        }
        self.configuration = configuration
        cacheControl = ResponseFields.legal(configuration.cacheControl)
        self.metrics = metrics
        self.logger = logger
        service = try DerivativeService(configuration: configuration.service) { metrics.event($0) }
        gallery = try Self.makeGallery(configuration, store: service.objectStore)
    }

    /// Runs until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish (up to
    /// `shutdownGraceSeconds`) and returns. `onRunning` gets the bound port.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let http = try makeService(onRunning: onRunning)
        var groupConfiguration = ServiceGroupConfiguration(services: [http], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGraceSeconds)
        try await ServiceGroup(configuration: groupConfiguration).run()
    }

    /// The HTTP/1.1 server as a `Service`, for callers that run it in their own `ServiceGroup` (the tests do).
    ///
    /// It is HummingbirdCore's server with `handle` as its responder, without `Hummingbird.Application`'s
    /// per-request work this server has no use for (a request-id logger, a task-local, a router context).
    /// Memory-cache hits of the media routes are answered before the responder, on the event loop
    /// (`CachedMediaHandler`). Handlers run on the event loop that read the request (`EventLoopTaskExecutor`).
    public func makeService(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some Service {
        // No idle timeout here: `CachedMediaHandler` keeps it for every request (CachedMediaChannel).
        var http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [WriteBufferLimits()], idleTimeout: nil)
        // Header limits: 32 KB in all, 100 fields (beyond them NIO's parser fails and the connection gets an
        // empty 400). NIO counts the request target as a field, so a field may be as long as the whole: at
        // 8 KB a field, a target over 8 KB never reached `RequestTarget`, whose 414 `uri-too-long` (nginx's
        // answer to a request line over its 8 KB buffers) the docs promise.
        http1.httpDecoder = .init(maxHeaderFieldSize: 32 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)
        let group = EventLoopGroupProvider.singleton.eventLoopGroup
        let responder: HTTPChannelHandler.Responder = { [self] request, writer, channel in
            var response = await handle(request, connection: channel)
            response.headers[.date] = date.now()
            try await writer.write(response: response.head, body: response.body)
        }
        let channel = CachedMediaChannel(http1: HTTP1Channel(responder: responder, configuration: http1), server: self,
                                         idleTimeout: TimeAmount(configuration.idleTimeout))
        let server = channel.server(
            configuration: ServerConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            eventLoopGroup: group,
            logger: logger)
        return OnEventLoops(server: server, group: group)
    }

    /// Runs `server` with `EventLoopTaskExecutor` preferred, which its connection tasks inherit.
    struct OnEventLoops: Service {
        let server: any Service
        let group: any EventLoopGroup
        func run() async throws {
            try await withTaskExecutorPreference(EventLoopTaskExecutor(group: group)) {
                try await server.run()
            }
        }
    }

    // MARK: - Handling

    /// Everything a request ends with, for the log line and metrics.
    private struct Answer {
        var response: Response
        var route: String
        var cache: String = "-"
        var bodyBytes = 0
    }

    /// The response to `request`; a cold derivative's wait is cancelled when the client leaves `connection`.
    func handle(_ request: Request, connection: (any Channel)? = nil) async -> Response {
        let started = monotonicNanoseconds()
        let total = inFlight.add(1, ordering: .relaxed).newValue
        metrics.inFlight(1, total: total)
        let target = request.head.path ?? "/"
        let span = configuration.tracer.map { Self.requestSpan(request, target: target, tracer: $0) }
        var answer: Answer
        do {
            answer = try await route(request, target: target, connection: connection)
        } catch let error as RequestTarget.RouteError {
            answer = Answer(response: Self.error(error.status, error.code, error.message), route: "error")
        } catch {
            answer = Answer(response: respond(to: error), route: "error")
        }
        // Pages, listings, errors and metrics carry their length in the header (only media answers set
        // `bodyBytes`): the log line and the bytes metric said 0 B for a 17 KB gallery page.
        if answer.bodyBytes == 0, let length = answer.response.headers[.contentLength].flatMap({ Int($0) }) {
            answer.bodyBytes = length
        }
        if request.method == .head, answer.response.status != .notModified {
            // GET's status and headers (Content-Length included), no body: errors too, on every route.
            answer.response = answer.response.createHeadResponse()
            answer.bodyBytes = 0
        }
        finished(request.method, target, status: answer.response.status, route: answer.route, cache: answer.cache,
                 bodyBytes: answer.bodyBytes, started: started)
        if let span {
            span.attributes["http.route"] = answer.route
            span.attributes["http.response.status_code"] = Int(answer.response.status.code)
            span.attributes["flipbook.cache"] = answer.cache
            if answer.response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
            span.end()
        }
        return answer.response
    }

    /// A server span for `request`, continuing its `traceparent` header if it has one.
    static func requestSpan(_ request: Request, target: String, tracer: any Tracer) -> any Span {
        var context = ServiceContext.topLevel
        tracer.extract(request.headers, into: &context, using: HeaderExtractor())
        let span = tracer.startSpan("\(request.method.rawValue) \(target.split(separator: "?").first ?? "/")", context: context, ofKind: .server)
        span.attributes["http.request.method"] = request.method.rawValue
        span.attributes["url.path"] = String(target.split(separator: "?").first ?? "/")
        return span
    }

    /// Reads trace headers from a request's fields.
    struct HeaderExtractor: Extractor {
        func extract(key: String, from carrier: HTTPFields) -> String? {
            carrier.first { $0.name.canonicalName == key }?.value
        }
    }

    /// The answer to a GET (or, with `isHEAD`, a HEAD) of the origin-form `target` if it names a media route
    /// whose derivative the memory cache holds, Date header included, as `handle` would answer it (same code:
    /// ranges, conditionals, HEAD, signature check, metrics and log line); nil for every other request, which
    /// `handle` answers. Synchronous: it runs on the event loop, in `CachedMediaHandler`.
    func cachedAnswer(isHEAD: Bool, target: String, request: @autoclosure () -> ConditionalHeaders) -> BufferedResponse? {
        let started = monotonicNanoseconds()
        // (/gallery and /list targets have routes that are no media route.) A traced server takes the full
        // path, where each request gets its span.
        guard configuration.tracer == nil,
              let parsed = try? RequestTarget(target), let route = MediaRoute(parsed.route),
              let wanted = try? derivativeRequest(parsed, route: route, target: target),
              let derivative = try? service.cachedEntry(wanted)
        else { return nil }
        metrics.inFlight(1, total: inFlight.add(1, ordering: .relaxed).newValue)
        var (answer, bodyBytes) = media(derivative, request: request())
        if isHEAD, answer.status != .notModified {
            answer.dropBody()
            bodyBytes = 0
        }
        answer.headers.append(.date, date.now())
        eventLoopAnswers.add(1, ordering: .relaxed)
        finished(isHEAD ? .head : .get, target, status: answer.status, route: route.name, media: route, cache: derivative.cache.rawValue,
                 bodyBytes: bodyBytes, started: started)
        return answer
    }

    /// A request's metrics and log line.
    private func finished(_ method: HTTPRequest.Method, _ target: String, status: HTTPResponse.Status, route: String, media: MediaRoute? = nil,
                          cache: String, bodyBytes: Int, started: UInt64) {
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        if let media {
            metrics.request(route: media, status: Int(status.code), seconds: seconds, bytes: bodyBytes)
        } else {
            metrics.request(route: route, status: Int(status.code), seconds: seconds, bytes: bodyBytes)
        }
        metrics.inFlight(-1, total: inFlight.subtract(1, ordering: .relaxed).newValue)
        logger.info("\(method) \(Self.printable(target)) \(status.code) \(bodyBytes) B \(String(format3(seconds * 1000))) ms cache=\(cache)")
    }

    private func route(_ request: Request, target: String, connection: (any Channel)?) async throws -> Answer {
        let isHEAD = request.method == .head
        guard request.method == .get || isHEAD else {
            var response = Self.error(405, "method-not-allowed", "only GET and HEAD are served")
            response.headers[.allow] = "GET, HEAD"
            return Answer(response: response, route: "error")
        }
        if target.hasPrefix("/gallery") || target.hasPrefix("/list"),
           let (response, name) = try await galleryResponse(target, head: isHEAD)
        {
            return Answer(response: response, route: name)
        }
        let parsed = try RequestTarget(target)
        switch parsed.route {
        case "health":
            return Answer(response: Self.text("ok\n", type: "text/plain; charset=utf-8"), route: "health")
        case "metrics":
            metrics.gauges(service: service)
            let body = metrics.exposition()
            return Answer(response: Self.bytes(body, type: "text/plain; version=0.0.4; charset=utf-8"), route: "metrics")
        default:
            break
        }
        guard let mediaRoute = MediaRoute(parsed.route) else {
            throw RequestTarget.RouteError(404, "not-found", "no route /\(parsed.route); see the README's URL API")
        }
        let wanted = try derivativeRequest(parsed, route: mediaRoute, target: target)
        let derivative: Derivative
        if let hit = try service.cachedEntry(wanted) {
            derivative = hit
        } else if configuration.cancelOnDisconnect, let connection {
            // A client that goes away cancels its wait; the job stops if nobody else waits for it. The
            // connection stays open for the next request otherwise (`DisconnectCancellation`).
            let loop = connection.eventLoop
            // No handler means the channel has closed (its handlers are gone): then its closeFuture says so.
            let clientLeft = connection.pipeline.handler(type: CachedMediaHandler.self).flatMap { $0.clientLeft(on: loop) }
                .flatMapError { _ in connection.closeFuture }
            do {
                derivative = try await DisconnectCancellation.run(until: clientLeft) { [service] in
                    try await service.derivative(wanted)
                }
            } catch {
                return Answer(response: respond(to: error), route: parsed.route)
            }
        } else {
            derivative = try await service.derivative(wanted)
        }
        var (answer, bytes) = media(derivative, request: ConditionalHeaders(request.headers))
        if isHEAD { answer.dropBody() }  // `handle` frames it as GET's; a file body is not read for nothing
        return Answer(response: answer.response, route: parsed.route, cache: derivative.cache.rawValue, bodyBytes: bytes)
    }

    private static func text(_ text: String, type: String) -> Response {
        bytes(Array(text.utf8), type: type)
    }

    private static func bytes(_ bytes: [UInt8], type: String) -> Response {
        var headers = ResponseFields()
        headers.append(.contentType, type)
        headers.append(.cacheControl, "no-store")
        return BufferedResponse(status: .ok, headers: headers, body: ByteBuffer(bytes: bytes)).response
    }

    // MARK: - Errors

    /// A JSON error response `{"error": code, "message": ...}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> Response {
        BufferedResponse.error(status, code, message).response
    }

    /// Maps service and library errors to statuses (see the README's table).
    func respond(to error: any Error) -> Response {
        switch error {
        case let e as DerivativeServiceError:
            switch e {
            case .badPath: return Self.error(400, e.code, e.description)
            case .notFound: return Self.error(404, e.code, e.description)
            case .unsupportedMedia: return Self.error(415, e.code, e.description)
            case .busy(let seconds):
                var response = Self.error(503, e.code, e.description)
                response.headers[.retryAfter] = String(seconds)
                return response
            case .timeout:
                var response = Self.error(503, e.code, e.description)
                response.headers[.retryAfter] = "5"
                return response
            }
        case let e as FlipbookError:
            switch e.code {
            // Sources fetched from elsewhere, mapped as imgproxy maps them (fetcher/errors.go): a refused
            // address and an origin's 4xx are 404, a timeout 504, a source over the limit 422. An origin's 5xx,
            // a connection that fails and a source that changed mid-read are 502 here, where imgproxy answers
            // 500 or 404: they are an upstream's failure, which a CDN should not cache as a missing file.
            case .fetchRefused, .notFound: return Self.error(404, e.code.rawValue, e.description)
            case .fetchFailed:
                if let status = e.context.flatMap(Self.upstreamStatus), (400..<500).contains(status) {
                    return Self.error(404, e.code.rawValue, e.description)
                }
                return Self.error(502, e.code.rawValue, e.description)
            case .timeout: return Self.error(504, e.code.rawValue, e.description)
            case .sourceChanged, .accessDenied: return Self.error(502, e.code.rawValue, e.description)
            case .unknownFormat: return Self.error(415, "not-media", e.description)
            case .unsupported: return Self.error(415, "unsupported-media", e.description)
            case .limitExceeded: return Self.error(422, "limit-exceeded", e.description)
            case .corrupt, .truncated: return Self.error(422, e.code.rawValue, e.description)
            case .invalidArgument: return Self.error(400, "bad-parameter", e.description)
            case .cancelled: return Self.error(503, "cancelled", e.description)
            default:
                logger.error("internal error: \(e.code): \(e.description)")
                return Self.error(500, e.code.rawValue, e.description)
            }
        case is CancellationError:
            return Self.error(503, "cancelled", "the request was cancelled")
        default:
            logger.error("internal error: \(error)")
            return Self.error(500, "internal", "internal error")
        }
    }

    /// The status an origin answered, from a fetch error's context (`http 404`, `s3 503 SlowDown`).
    static func upstreamStatus(_ context: String) -> Int? {
        let words = context.split(separator: " ")
        guard words.count >= 2, words[0] == "http" || words[0] == "s3" else { return nil }
        return Int(words[1])
    }

    /// The target for a log line: control characters escaped, at most 300 characters.
    static func printable(_ target: String) -> String {
        var out = ""
        for scalar in target.unicodeScalars.prefix(300) {
            out += scalar.value < 0x20 || scalar.value == 0x7F ? "\\x\(String(scalar.value, radix: 16))" : String(scalar)
        }
        return out
    }
}

/// Milliseconds with three significant decimals, without Foundation.
func format3(_ value: Double) -> String {
    let scaled = Int((value * 1000).rounded())
    let whole = scaled / 1000, fraction = scaled % 1000
    let digits = String(fraction)
    return "\(whole).\(String(repeating: "0", count: 3 - digits.count))\(digits)"
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}
