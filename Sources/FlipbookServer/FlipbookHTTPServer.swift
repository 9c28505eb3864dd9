import Flipbook
import FlipbookGallery
import FlipbookService
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
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

    /// Builds the service (threads, caches) and the metrics. Throws if the root or disk cache is unusable.
    public init(configuration: Configuration, logger: Logger = Logger(label: "flipbook.serve")) throws {
        var configuration = configuration
        let metrics = ServerMetrics()
        if let signer = configuration.signer {
            // Storyboards reference their sheets by signed URLs; the tag keeps differently signed WebVTT
            // files apart in a shared disk cache.
            configuration.service.storyboardSheetURL = { path, n in signer.sign("/storyboard/\(path).sheet-\(n).jpg") }
            configuration.service.storyboardURLTag = "signed:" + signer.signature(for: "storyboard-tag")
        }
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        service = try DerivativeService(configuration: configuration.service) { metrics.event($0) }
        gallery = try Self.makeGallery(configuration)
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
    /// Handlers run on the event loop that read the request (`EventLoopTaskExecutor`).
    public func makeService(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some Service {
        var http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [WriteBufferLimits()], idleTimeout: .seconds(75))
        // Header limits: 8 KB a field, 32 KB in all (NIO answers 431 or closes beyond them).
        http1.httpDecoder = .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)
        let group = EventLoopGroupProvider.singleton.eventLoopGroup
        let date = HTTPDate()
        let server = try HTTPServerBuilder.http1(configuration: http1).buildServer(
            configuration: ServerConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            eventLoopGroup: group,
            logger: logger,
            responder: { [self] request, writer, _ in
                var response = await handle(request)
                response.headers[.date] = date.now()
                try await writer.write(response: response.head, body: response.body)
            },
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) })
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

    func handle(_ request: Request) async -> Response {
        let started = monotonicNanoseconds()
        let total = inFlight.add(1, ordering: .relaxed).newValue
        metrics.inFlight(1, total: total)
        let target = request.head.path ?? "/"
        var answer: Answer
        do {
            answer = try await route(request, target: target)
        } catch let error as RequestTarget.RouteError {
            answer = Answer(response: Self.error(error.status, error.code, error.message), route: "error")
        } catch {
            answer = Answer(response: respond(to: error), route: "error")
        }
        if request.method == .head, answer.response.status != .notModified {
            // GET's status and headers (Content-Length included), no body: errors too, on every route.
            answer.response = answer.response.createHeadResponse()
            answer.bodyBytes = 0
        }
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        metrics.request(route: answer.route, status: Int(answer.response.status.code), seconds: seconds, bytes: answer.bodyBytes)
        metrics.inFlight(-1, total: inFlight.subtract(1, ordering: .relaxed).newValue)
        logger.info("\(request.method) \(Self.printable(target)) \(answer.response.status.code) \(answer.bodyBytes) B \(String(format3(seconds * 1000))) ms cache=\(answer.cache)")
        return answer.response
    }

    private func route(_ request: Request, target: String) async throws -> Answer {
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
        case "mp4", "thumb", "poster", "preview", "storyboard", "original":
            break
        default:
            throw RequestTarget.RouteError(404, "not-found", "no route /\(parsed.route); see the README's URL API")
        }
        if let signer = configuration.signer {
            guard signer.verify(target) else {
                throw RequestTarget.RouteError(403, "bad-signature", "the sig parameter is missing or wrong")
            }
        }
        var segments = parsed.segments
        let operation: DerivativeRequest.Operation
        switch parsed.route {
        case "mp4": operation = .mp4(maxSize: try parsed.size(default: nil))
        case "thumb": operation = .thumb(try parsed.thumbnailRequest(defaultSize: 256))
        case "poster": operation = .poster(try parsed.thumbnailRequest(defaultSize: 256))
        case "preview": operation = .preview(size: try parsed.size(default: 320) ?? 320)
        case "storyboard":
            guard let last = segments.last else { throw RequestTarget.RouteError(404, "not-found", "no storyboard named") }
            if last.hasSuffix(".vtt"), last.count > 4 {
                segments[segments.count - 1] = String(last.dropLast(4))
                operation = .storyboardVTT
            } else if let (name, sheet) = Self.sheetName(last) {
                segments[segments.count - 1] = name
                operation = .storyboardSheet(sheet)
            } else {
                throw RequestTarget.RouteError(404, "not-found", "storyboard URLs end in .vtt or .sheet-N.jpg")
            }
        default: operation = .original
        }
        let derivativeRequest = DerivativeRequest(segments: segments, operation: operation)
        let derivative: Derivative
        var closesConnection = false
        if let hit = try service.cachedDerivative(derivativeRequest) {
            derivative = hit
        } else if configuration.cancelOnDisconnect {
            // A client that goes away cancels its wait; the job stops if nobody else waits for it.
            // Hummingbird closes the connection after a request watched this way, so the response says so.
            closesConnection = true
            do {
                derivative = try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await self.service.derivative(derivativeRequest)
                }
            } catch {
                var response = respond(to: error)
                response.headers[.connection] = "close"
                return Answer(response: response, route: parsed.route)
            }
        } else {
            derivative = try await service.derivative(derivativeRequest)
        }
        var (response, bytes) = media(derivative, request: request)
        if closesConnection { response.headers[.connection] = "close" }
        return Answer(response: response, route: parsed.route, cache: derivative.cache.rawValue, bodyBytes: bytes)
    }

    /// `name.sheet-N.jpg` -> (name, N).
    static func sheetName(_ segment: String) -> (String, Int)? {
        guard segment.hasSuffix(".jpg") else { return nil }
        let stem = segment.dropLast(4)
        guard let dash = stem.lastIndex(of: "-") else { return nil }
        let digits = stem[stem.index(after: dash)...]
        let head = stem[..<dash]
        guard head.hasSuffix(".sheet"), !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0 >= "0" && $0 <= "9" }),
              let n = Int(digits)
        else { return nil }
        let name = String(head.dropLast(6))
        return name.isEmpty ? nil : (name, n)
    }

    /// The media response: conditionals, then ranges, then the body as a slice of the cached buffer. HEAD
    /// gets the same status and headers (ranges included, as nginx answers them) and `handle` drops the body.
    private func media(_ d: Derivative, request: Request) -> (Response, Int) {
        var headers = HTTPFields()
        headers[.eTag] = d.etag
        headers[.acceptRanges] = "bytes"
        headers[.cacheControl] = configuration.cacheControl
        let rangeHeader = request.headers[.range]
        let outcome = Conditionals.evaluate(etag: d.etag, ifMatch: request.headers[.ifMatch], ifNoneMatch: request.headers[.ifNoneMatch],
                                            ifRange: request.headers[.ifRange], hasRange: rangeHeader != nil)
        let size = d.size
        switch outcome {
        case .notModified:
            return (Response(status: .notModified, headers: headers, body: ResponseBody { writer in try await writer.finish(nil) }), 0)
        case .preconditionFailed:
            var response = Self.error(412, "precondition-failed", "If-Match does not match the current ETag")
            response.headers[.eTag] = d.etag
            return (response, 0)
        case .proceed(let rangeAllowed):
            headers[.contentType] = d.contentType
            // RFC 9110 14.2 defines Range for GET only, so a server may ignore it on HEAD; nginx does not (206 or
            // 416 with Content-Range), and HEAD answers exactly what GET would, so neither do we.
            let decision = rangeAllowed ? ByteRanges.evaluate(rangeHeader, size: size) : .full
            switch decision {
            case .partial(let range):
                headers[.contentRange] = ByteRanges.contentRange(range, size: size)
                let slice = d.bytes.getSlice(at: d.bytes.readerIndex + range.lowerBound, length: range.count)!
                return (Self.body(slice, status: .partialContent, headers: headers), range.count)
            case .unsatisfiable:
                var response = Self.error(416, "range-not-satisfiable", "the range starts at or past the end (\(size) bytes)")
                response.headers[.contentRange] = ByteRanges.unsatisfiedRange(size: size)
                response.headers[.acceptRanges] = "bytes"
                response.headers[.eTag] = d.etag
                return (response, 0)
            case .full, .multiple:
                return (Self.body(d.bytes, status: .ok, headers: headers), size)
            }
        }
    }

    private static func body(_ buffer: ByteBuffer, status: HTTPResponse.Status, headers: HTTPFields) -> Response {
        var headers = headers
        headers[.contentLength] = String(buffer.readableBytes)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    private static func text(_ text: String, type: String) -> Response {
        bytes(Array(text.utf8), type: type)
    }

    private static func bytes(_ bytes: [UInt8], type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        return body(ByteBuffer(bytes: bytes), status: .ok, headers: headers)
    }

    // MARK: - Errors

    /// A JSON error response `{"error": code, "message": ...}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> Response {
        let json = "{\"error\": \(JSON.string(code)), \"message\": \(JSON.string(message))}\n"
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        headers[.contentLength] = String(json.utf8.count)
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
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
