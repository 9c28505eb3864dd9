import Flipbook
import FlipbookService

/// A raw request target (`/thumb/a%20b.jpg?size=64`) split into route, decoded path segments and query
/// parameters. Pure: every rejection is a `RouteError` the responder maps to a status and JSON body.
public struct RequestTarget: Sendable, Equatable {
    /// First path segment: mp4, thumb, poster, preview, storyboard, original, health, metrics.
    public var route: String
    /// The rest of the path, each segment percent-decoded.
    public var segments: [String]
    /// The rest of the path as received (percent-encoded), for messages.
    public var rawPath: String
    /// Query parameters in order, percent-decoded (`sig` included).
    public var query: [(name: String, value: String)]

    public static func == (a: RequestTarget, b: RequestTarget) -> Bool {
        a.route == b.route && a.segments == b.segments && a.rawPath == b.rawPath
            && a.query.map(\.name) == b.query.map(\.name) && a.query.map(\.value) == b.query.map(\.value)
    }

    /// Why a target was refused before any file was looked at.
    public struct RouteError: Error, Equatable, Sendable {
        public var status: Int
        public var code: String
        public var message: String
        init(_ status: Int, _ code: String, _ message: String) {
            self.status = status
            self.code = code
            self.message = message
        }
    }

    /// Longest target accepted (414 beyond). nginx's default large_client_header_buffers line is 8 KB.
    public static let maxLength = 8192

    /// Parses `target`. Rejects (400) percent-encoded '/', NUL, invalid escapes or UTF-8, and empty, '.'
    /// or '..' segments, encoded or not; a dot-segment is never normalised away.
    ///
    /// One pass over the target's contiguous UTF-8 with integer offsets: splitting and slicing through
    /// `String.Index` (each step checked against the string's encoding) were a quarter of a cache hit's own
    /// instructions. Every piece is cut at an ASCII separator, so each is valid UTF-8 as the target is.
    public init(_ target: String) throws(RouteError) {
        guard target.utf8.count <= Self.maxLength else { throw RouteError(414, "uri-too-long", "the request target is over \(Self.maxLength) bytes") }
        let parsed: Result<RequestTarget, RouteError>
        if let done = target.utf8.withContiguousStorageIfAvailable({ Self.parse($0) }) {
            parsed = done
        } else {
            var copy = target
            parsed = copy.withUTF8 { Self.parse($0) }
        }
        self = try parsed.get()
    }

    private init(route: String, segments: [String], rawPath: String, query: [(name: String, value: String)]) {
        self.route = route
        self.segments = segments
        self.rawPath = rawPath
        self.query = query
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<RequestTarget, RouteError> {
        let slash = UInt8(ascii: "/")
        guard bytes.first == slash else { return .failure(RouteError(400, "bad-path", "the request target must start with '/'")) }
        let count = bytes.count
        // The path ends at the first '?'.
        var pathEnd = 1
        while pathEnd < count, bytes[pathEnd] != UInt8(ascii: "?") { pathEnd += 1 }
        // The route: up to the next '/', as sent.
        var routeEnd = 1
        while routeEnd < pathEnd, bytes[routeEnd] != slash { routeEnd += 1 }
        let route = text(bytes, 1..<routeEnd)
        var rawPath = ""
        var segments: [String] = []
        if routeEnd < pathEnd {
            // Everything after "/route/", as sent.
            rawPath = text(bytes, (routeEnd + 1)..<pathEnd)
            var start = routeEnd + 1
            while true {
                var end = start
                while end < pathEnd, bytes[end] != slash { end += 1 }
                guard let segment = percentDecode(bytes, start..<end) else {
                    return .failure(RouteError(400, "bad-path", "the path has an invalid percent-escape or is not UTF-8"))
                }
                if segment.isEmpty || segment == "." || segment == ".."
                    || segment.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\\") })
                {
                    return .failure(RouteError(400, "bad-path", "the path may not contain empty, '.' or '..' segments, an encoded '/', '\\\\' or NUL"))
                }
                segments.append(segment)
                if end == pathEnd { break }
                start = end + 1
            }
        }
        var query: [(name: String, value: String)] = []
        var start = pathEnd + 1
        while start < count {
            var end = start
            while end < count, bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end, bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                guard let name = percentDecode(bytes, start..<equals),
                      let value = percentDecode(bytes, equals < end ? (equals + 1)..<end : end..<end)
                else {
                    return .failure(RouteError(400, "bad-parameter", "a query parameter has an invalid percent-escape"))
                }
                query.append((name, value))
            }
            start = end + 1
        }
        return .success(RequestTarget(route: route, segments: segments, rawPath: rawPath, query: query))
    }

    /// The bytes at `range`, which are valid UTF-8 (a piece of a String cut at ASCII separators). (Decoded:
    /// slicing the String at the same offsets and copying the slice cost three times as much.)
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        range.isEmpty ? "" : String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The value of query parameter `name`; 400 if it appears more than once.
    public func parameter(_ name: String) throws(RouteError) -> String? {
        let values = query.filter { $0.name == name }
        guard values.count <= 1 else { throw RouteError(400, "bad-parameter", "'\(name)' is given more than once") }
        return values.first?.value
    }

    /// `size`: 1 to 4096 digits-only, else 400; `defaultValue` when absent.
    public func size(default defaultValue: Int?) throws(RouteError) -> Int? {
        guard let text = try parameter("size") else { return defaultValue }
        guard !text.isEmpty, text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text), (1...4096).contains(n) else {
            throw RouteError(400, "bad-size", "size must be a whole number from 1 to 4096")
        }
        return n
    }

    /// The thumbnail request from `size`, `fit` and `format`.
    public func thumbnailRequest(defaultSize: Int) throws(RouteError) -> ThumbnailRequest {
        let size = try size(default: defaultSize) ?? defaultSize
        var fit = Fit.inside
        if let text = try parameter("fit") {
            switch text {
            case "inside": fit = .inside
            case "cover": fit = .cover
            default: throw RouteError(400, "bad-parameter", "fit must be inside or cover")
            }
        }
        var format = OutputFormat.jpeg
        if let text = try parameter("format") {
            guard let f = OutputFormat(rawValue: text) else { throw RouteError(400, "bad-parameter", "format must be jpeg, webp or png") }
            format = f
        }
        return ThumbnailRequest(maxPixelSize: size, fit: fit, upscale: false, format: format)
    }

    /// The bytes at `range` percent-decoded, or nil for an invalid escape or a result that is not UTF-8.
    private static func percentDecode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        var escaped = false
        for i in range where bytes[i] == UInt8(ascii: "%") {
            escaped = true
            break
        }
        // Nothing escaped: the text itself (a piece of a String, so already valid UTF-8).
        guard escaped else { return text(bytes, range) }
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < range.upperBound, let hi = Hex.value(of: bytes[i + 1]), let lo = Hex.value(of: bytes[i + 2]) else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(c)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
