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
    public init(_ target: String) throws(RouteError) {
        guard target.utf8.count <= Self.maxLength else { throw RouteError(414, "uri-too-long", "the request target is over \(Self.maxLength) bytes") }
        // Split at ASCII separators in the UTF-8 view: byte searches rather than Character comparisons (the
        // String ones were a fifth of the cache-hit path under wrk). An index of an ASCII byte is a valid
        // String index, so the slices below are the same text as before.
        let bytes = target.utf8
        guard bytes.first == UInt8(ascii: "/") else { throw RouteError(400, "bad-path", "the request target must start with '/'") }
        let pathPart: Substring, queryPart: Substring?
        if let q = bytes.firstIndex(of: UInt8(ascii: "?")) {
            pathPart = target[..<q]
            queryPart = target[bytes.index(after: q)...]
        } else {
            pathPart = Substring(target)
            queryPart = nil
        }
        let afterSlash = pathPart.utf8.index(after: pathPart.startIndex)
        let rawSegments = Self.split(pathPart[afterSlash...], at: UInt8(ascii: "/"), omittingEmpty: false)
        route = String(rawSegments[0])
        // Everything after "/route/", as sent (the segments joined again, without building them).
        rawPath = rawSegments.count > 1 ? String(pathPart[rawSegments[1].startIndex...]) : ""
        var decoded: [String] = []
        decoded.reserveCapacity(rawSegments.count - 1)
        for raw in rawSegments.dropFirst() {
            guard let segment = Self.percentDecode(raw) else {
                throw RouteError(400, "bad-path", "the path has an invalid percent-escape or is not UTF-8")
            }
            if segment.isEmpty || segment == "." || segment == ".."
                || segment.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\\") })
            {
                throw RouteError(400, "bad-path", "the path may not contain empty, '.' or '..' segments, an encoded '/', '\\\\' or NUL")
            }
            decoded.append(segment)
        }
        segments = decoded
        var params: [(name: String, value: String)] = []
        if let queryPart {
            for pair in Self.split(queryPart, at: UInt8(ascii: "&"), omittingEmpty: true) {
                let name: Substring, value: Substring
                if let eq = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                    name = pair[..<eq]
                    value = pair[pair.utf8.index(after: eq)...]
                } else {
                    name = pair
                    value = ""
                }
                guard let name = Self.percentDecode(name), let value = Self.percentDecode(value) else {
                    throw RouteError(400, "bad-parameter", "a query parameter has an invalid percent-escape")
                }
                params.append((name, value))
            }
        }
        query = params
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

    /// `text` cut at every `separator` byte (an ASCII character), as `split(separator:)` would, keeping empty
    /// pieces unless `omittingEmpty`. Never empty when empty pieces are kept.
    static func split(_ text: Substring, at separator: UInt8, omittingEmpty: Bool) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var i = start
        let bytes = text.utf8
        while i < bytes.endIndex {
            if bytes[i] == separator {
                if !omittingEmpty || start < i { pieces.append(text[start..<i]) }
                start = bytes.index(after: i)
            }
            i = bytes.index(after: i)
        }
        if !omittingEmpty || start < text.endIndex { pieces.append(text[start...]) }
        return pieces
    }

    static func percentDecode(_ text: Substring) -> String? {
        // Nothing escaped: the text itself (a slice of a String, so already valid UTF-8).
        if !text.utf8.contains(UInt8(ascii: "%")) { return String(text) }
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let c = bytes.next() {
            if c == UInt8(ascii: "%") {
                guard let a = bytes.next(), let b = bytes.next(), let hi = Hex.value(of: a), let lo = Hex.value(of: b) else { return nil }
                out.append(hi << 4 | lo)
            } else {
                out.append(c)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
