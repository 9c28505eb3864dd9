import Flipbook
import FlipbookService
import Hummingbird
import NIOCore

/// A whole response whose body is at most one buffer or one range of an open disk-cache object: what the
/// media route and the JSON errors make. The async route hands it to Hummingbird as a `Response`;
/// `CachedMediaHandler` serialises it itself (`ResponseHead`) and sends a file range with `sendfile`. Both
/// send the same status line, headers (in the same order) and body.
struct BufferedResponse {
    var status: HTTPResponse.Status
    var headers: ResponseFields
    /// The body; nil for a 304 (no body, no Content-Length), for a HEAD (GET's headers, no body) and when
    /// the body is `file`.
    var body: ByteBuffer?
    /// The body as a range of a disk-cache object, sent with `sendfile` by `CachedMediaHandler`.
    var file: FileSlice?

    /// `length` bytes at `offset` of an open disk-cache object.
    struct FileSlice {
        var file: CachedFile
        var offset: Int
        var length: Int
    }

    /// A response with `body`, whose length is appended as Content-Length after `headers` (which have none).
    init(status: HTTPResponse.Status, headers: ResponseFields, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.headers.append(.contentLength, String(body.readableBytes))
        self.body = body
    }

    /// A response whose body is `file`, its length appended as Content-Length after `headers`.
    init(status: HTTPResponse.Status, headers: ResponseFields, file: FileSlice) {
        self.status = status
        self.headers = headers
        self.headers.append(.contentLength, String(file.length))
        self.file = file
    }

    /// A response without a body or Content-Length (a 304).
    init(status: HTTPResponse.Status, headers: ResponseFields) {
        self.status = status
        self.headers = headers
        body = nil
    }

    /// Drops the body (a HEAD's answer): the headers, Content-Length included, stay GET's.
    mutating func dropBody() {
        body = nil
        file = nil
    }

    /// A JSON error `{"error": code, "message": ...}`, not to be cached.
    static func error(_ status: Int, _ code: String, _ message: String) -> BufferedResponse {
        let json = "{\"error\": \(JSON.string(code)), \"message\": \(JSON.string(message))}\n"
        var headers = ResponseFields()
        headers.append(.contentType, "application/json")
        headers.append(.cacheControl, "no-store")
        return BufferedResponse(status: HTTPResponse.Status(code: status), headers: headers, body: ByteBuffer(string: json))
    }

    /// The same response for Hummingbird's responder, whose writer takes buffers only: a file body is read
    /// into one (`pread` of the range; a hit reaches this path only pipelined behind a miss, on a connection
    /// that is not writable, or with `Connection: close`).
    var response: Response {
        let fields = headers.httpFields
        if let file {
            do {
                let bytes = try file.file.read(offset: file.offset, length: file.length)
                return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: bytes))
            } catch {
                return BufferedResponse.error(500, "internal", "cannot read the cached derivative").response
            }
        }
        if let body { return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: body)) }
        return Response(status: status, headers: fields, body: ResponseBody { writer in try await writer.finish(nil) })
    }
}

/// Response header fields in order. Cheaper than `HTTPFields` for the few fields a media response has (no
/// index, no per-value validation: every value is made here or checked once, as `legal`), and turned into
/// `HTTPFields` for Hummingbird or serialised by `ResponseHead`.
struct ResponseFields {
    private(set) var fields: [(name: HTTPField.Name, value: String)] = []

    init() { fields.reserveCapacity(8) }

    mutating func append(_ name: HTTPField.Name, _ value: String) { fields.append((name, value)) }

    var httpFields: HTTPFields {
        var out = HTTPFields()
        out.reserveCapacity(fields.count)
        for field in fields { out.append(HTTPField(name: field.name, value: field.value)) }
        return out
    }

    /// `value` as `HTTPField` would keep it (characters a field value may not hold replaced), for values
    /// that come from outside the server (configuration), checked once rather than per response.
    static func legal(_ value: String) -> String { HTTPField(name: .cacheControl, value: value).value }
}

/// swift-http-types' `HTTPField`, named through `HTTPFields` (Hummingbird re-exports the collection, not its element).
typealias HTTPField = HTTPFields.Element
