import FlipbookService
import Hummingbird
import NIOCore
import NIOHTTP1

/// The media routes' parts that the async route (`handle`) and the memory-hit fast path
/// (`CachedMediaHandler`) share: the target's derivative request and the response to a derivative.
extension FlipbookHTTPServer {
    /// The derivative a `target` of the media route `route` asks for, once its signature is checked (403
    /// without a valid `sig` when signing is on); 400 or 404 for bad parameters or storyboard names.
    func derivativeRequest(_ parsed: RequestTarget, route: MediaRoute, target: String) throws(RequestTarget.RouteError) -> DerivativeRequest {
        if let signer = configuration.signer {
            guard signer.verify(target) else {
                throw RequestTarget.RouteError(403, "bad-signature", "the sig parameter is missing or wrong")
            }
        }
        if let url = try parsed.parameter("url") { return try remoteRequest(parsed, route: route, url: url) }
        var segments = parsed.segments
        let operation: DerivativeRequest.Operation
        switch route {
        case .mp4: operation = .mp4(maxSize: try parsed.size(default: nil))
        case .thumb: operation = .thumb(try parsed.thumbnailRequest(defaultSize: 256))
        case .poster: operation = .poster(try parsed.thumbnailRequest(defaultSize: 256))
        case .preview: operation = .preview(size: try parsed.size(default: 320) ?? 320)
        case .storyboard:
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
        case .original: operation = .original
        }
        return DerivativeRequest(segments: segments, operation: operation)
    }

    /// The request for a source named by `?url=` (issue 44): only in a signed request (403 otherwise, whatever
    /// the configuration: the signature was checked before this), only when the service fetches URLs (403
    /// `remote-sources-off`), and with no path besides (400). A storyboard's WebVTT is `/storyboard?url=U`, its
    /// sheets `/storyboard?url=U&sheet=N`.
    private func remoteRequest(_ parsed: RequestTarget, route: MediaRoute, url: String) throws(RequestTarget.RouteError) -> DerivativeRequest {
        guard configuration.signer != nil else {
            throw RequestTarget.RouteError(403, "bad-signature", "a ?url= source is fetched only for a signed request")
        }
        guard service.configuration.remoteSources != nil else {
            throw RequestTarget.RouteError(403, "remote-sources-off", "this server fetches no URLs (it was started without --remote-sources)")
        }
        guard parsed.segments.isEmpty else { throw RequestTarget.RouteError(400, "bad-path", "a request with ?url= names no path") }
        guard !url.isEmpty else { throw RequestTarget.RouteError(400, "bad-parameter", "url is empty") }
        let operation: DerivativeRequest.Operation
        switch route {
        case .mp4: operation = .mp4(maxSize: try parsed.size(default: nil))
        case .thumb: operation = .thumb(try parsed.thumbnailRequest(defaultSize: 256))
        case .poster: operation = .poster(try parsed.thumbnailRequest(defaultSize: 256))
        case .preview: operation = .preview(size: try parsed.size(default: 320) ?? 320)
        case .original: operation = .original
        case .storyboard:
            if let text = try parsed.parameter("sheet") {
                guard !text.isEmpty, text.utf8.count <= 6, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text) else {
                    throw RequestTarget.RouteError(400, "bad-parameter", "sheet must be a whole number")
                }
                operation = .storyboardSheet(n)
            } else {
                operation = .storyboardVTT
            }
        }
        return DerivativeRequest(url: url, operation: operation)
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

    /// The media response to a request with these conditional and range headers, and the body bytes it counts
    /// in the metrics: conditionals, then ranges, then the body as a slice of the cached buffer (nothing
    /// copied) or a range of the open disk-cache object. HEAD gets the same status and headers (ranges included, as nginx answers them); the caller
    /// drops the body.
    func media(_ d: Derivative, request: ConditionalHeaders) -> (BufferedResponse, Int) {
        var headers = ResponseFields()
        headers.append(.eTag, d.etag)
        headers.append(.acceptRanges, "bytes")
        headers.append(.cacheControl, cacheControl)
        let rangeHeader = request.range
        let outcome = Conditionals.evaluate(etag: d.etag, ifMatch: request.ifMatch, ifNoneMatch: request.ifNoneMatch,
                                            ifRange: request.ifRange, hasRange: rangeHeader != nil)
        let file = d.file  // read once: each read of the optional reference retained and released it
        let size = file?.size ?? d.bytes.readableBytes
        switch outcome {
        case .notModified:
            return (BufferedResponse(status: .notModified, headers: consume headers), 0)
        case .preconditionFailed:
            var response = BufferedResponse.error(412, "precondition-failed", "If-Match does not match the current ETag")
            response.headers.append(.eTag, d.etag)
            return (response, 0)
        case .proceed(let rangeAllowed):
            headers.append(.contentType, d.contentType)
            // RFC 9110 14.2 defines Range for GET only, so a server may ignore it on HEAD; nginx does not (206 or
            // 416 with Content-Range), and HEAD answers exactly what GET would, so neither do we.
            let decision = rangeAllowed ? ByteRanges.evaluate(rangeHeader, size: size) : .full
            switch decision {
            case .partial(let range):
                headers.appendContentRange(range, size: size)
                // (Not `range.count`: ClosedRange's count goes through its generic index type.)
                let length = range.upperBound - range.lowerBound + 1
                if let file {
                    let slice = BufferedResponse.FileSlice(file: file, offset: range.lowerBound, length: length)
                    return (BufferedResponse(status: .partialContent, headers: consume headers, file: slice), length)
                }
                let slice = d.bytes.getSlice(at: d.bytes.readerIndex + range.lowerBound, length: length)!
                return (BufferedResponse(status: .partialContent, headers: consume headers, body: slice), length)
            case .unsatisfiable:
                var response = BufferedResponse.error(416, "range-not-satisfiable", "the range starts at or past the end (\(size) bytes)")
                response.headers.append(.contentRange, ByteRanges.unsatisfiedRange(size: size))
                response.headers.append(.acceptRanges, "bytes")
                response.headers.append(.eTag, d.etag)
                return (response, 0)
            case .full, .multiple:
                if let file {
                    return (BufferedResponse(status: .ok, headers: consume headers, file: .init(file: file, offset: 0, length: size)), size)
                }
                return (BufferedResponse(status: .ok, headers: consume headers, body: d.bytes), size)
            }
        }
    }
}

/// The request headers a media response depends on, found in one pass over the fields rather than a lookup
/// each; a repeated field's values are joined with ", ", as `HTTPFields`' subscript joins them. Read from
/// Hummingbird's `HTTPFields` on the async path and from NIO's `HTTPHeaders` on the event loop.
struct ConditionalHeaders {
    var range: String?
    var ifMatch: String?
    var ifNoneMatch: String?
    var ifRange: String?

    init(_ fields: HTTPFields) {
        for field in fields {
            switch field.name {
            case .range: Self.add(field.value, to: &range)
            case .ifMatch: Self.add(field.value, to: &ifMatch)
            case .ifNoneMatch: Self.add(field.value, to: &ifNoneMatch)
            case .ifRange: Self.add(field.value, to: &ifRange)
            default: break
            }
        }
    }

    /// The same from NIO's headers, whose names keep the client's case.
    init(_ headers: HTTPHeaders) {
        for (name, value) in headers {
            // Every name of interest starts with r or i; most of a request's fields are skipped on that byte.
            guard let first = name.utf8.first, first | 0x20 == UInt8(ascii: "r") || first | 0x20 == UInt8(ascii: "i") else { continue }
            if Self.named(name, "range") {
                Self.add(value, to: &range)
            } else if Self.named(name, "if-match") {
                Self.add(value, to: &ifMatch)
            } else if Self.named(name, "if-none-match") {
                Self.add(value, to: &ifNoneMatch)
            } else if Self.named(name, "if-range") {
                Self.add(value, to: &ifRange)
            }
        }
    }

    private static func add(_ value: String, to slot: inout String?) { slot = slot.map { $0 + ", " + value } ?? value }

    /// Whether `name` is `lowercase` in any case (ASCII). Over the name's contiguous UTF-8 (every name NIO
    /// hands over has it): zipping the UTF-8 view cost more than the rest of the pass.
    private static func named(_ name: String, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard name.utf8.count == expected.count else { return false }
        func same(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            for i in 0..<bytes.count {
                let a = bytes[i]
                if (a >= 0x41 && a <= 0x5A ? a | 0x20 : a) != expected[i] { return false }
            }
            return true
        }
        return name.utf8.withContiguousStorageIfAvailable(same) ?? Array(name.utf8).withUnsafeBufferPointer(same)
    }
}
