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
    var body: Body

    /// What follows the head.
    enum Body {
        /// No body: a 304 (no Content-Length either), or a HEAD's answer (GET's headers).
        case none
        /// Bytes in memory (a slice of the cached buffer: nothing copied).
        case buffer(ByteBuffer)
        /// A range of a disk-cache object, sent with `sendfile` by `CachedMediaHandler`.
        case file(FileSlice)
    }

    /// `length` bytes at `offset` of an open disk-cache object.
    struct FileSlice {
        var file: CachedFile
        var offset: Int
        var length: Int
    }

    // The initialisers consume `headers`: appending to a copy the caller still held copied the whole list.

    /// A response with `body`, whose length is appended as Content-Length after `headers` (which have none).
    init(status: HTTPResponse.Status, headers: consuming ResponseFields, body: ByteBuffer) {
        headers.append(.contentLength, decimal: body.readableBytes)
        self.status = status
        self.headers = headers
        self.body = .buffer(body)
    }

    /// A response whose body is `file`, its length appended as Content-Length after `headers`.
    init(status: HTTPResponse.Status, headers: consuming ResponseFields, file: FileSlice) {
        headers.append(.contentLength, decimal: file.length)
        self.status = status
        self.headers = headers
        self.body = .file(file)
    }

    /// A response without a body or Content-Length (a 304).
    init(status: HTTPResponse.Status, headers: consuming ResponseFields) {
        self.status = status
        self.headers = headers
        body = .none
    }

    /// Drops the body (a HEAD's answer): the headers, Content-Length included, stay GET's.
    mutating func dropBody() { body = .none }

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
        switch body {
        case .file(let file):
            do {
                let bytes = try file.file.read(offset: file.offset, length: file.length)
                return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: bytes))
            } catch {
                return BufferedResponse.error(500, "internal", "cannot read the cached derivative").response
            }
        case .buffer(let bytes):
            return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: bytes))
        case .none:
            return Response(status: status, headers: fields, body: ResponseBody { writer in try await writer.finish(nil) })
        }
    }
}

/// Response header fields in order. Cheaper than `HTTPFields` for the few fields a media response has (no
/// index, no per-value validation: every value is made here or checked once, as `legal`), and turned into
/// `HTTPFields` for Hummingbird or serialised by `ResponseHead`. Numbers are kept as numbers: the event
/// loop's answers write their digits straight into the head, the async path spells them as text.
///
/// (Kept in an array: eight inline fields, `InlineArray`, cost 2.4k instructions more a hit than the
/// array's allocation, every read of a field copying the whole of them.)
struct ResponseFields {
    struct Field {
        var name: Name
        var value: Value
    }

    /// The names the server's buffered responses use, spelled as swift-http-types and NIO's encoder spell
    /// them; written into a head from static text.
    enum Name: UInt8 {
        case eTag, acceptRanges, cacheControl, contentType, contentRange, contentLength, date

        /// The name as written in a head.
        var text: StaticString {
            switch self {
            case .eTag: "ETag"
            case .acceptRanges: "Accept-Ranges"
            case .cacheControl: "Cache-Control"
            case .contentType: "Content-Type"
            case .contentRange: "Content-Range"
            case .contentLength: "Content-Length"
            case .date: "Date"
            }
        }

        /// The same as swift-http-types' name.
        var field: HTTPField.Name {
            switch self {
            case .eTag: .eTag
            case .acceptRanges: .acceptRanges
            case .cacheControl: .cacheControl
            case .contentType: .contentType
            case .contentRange: .contentRange
            case .contentLength: .contentLength
            case .date: .date
            }
        }
    }

    /// A field's value.
    enum Value {
        case text(String)
        /// A non-negative integer in decimal (Content-Length).
        case decimal(Int)
        /// `bytes first-last/size` (Content-Range of a 206).
        case contentRange(first: Int, last: Int, size: Int)

        /// The value as text.
        var text: String {
            switch self {
            case .text(let text): text
            case .decimal(let n): String(n)
            case .contentRange(let first, let last, let size): ByteRanges.contentRange(first...last, size: size)
            }
        }
    }

    private(set) var fields: [Field] = []

    /// Room for the seven fields of a media response.
    init() { fields.reserveCapacity(7) }

    mutating func append(_ field: Field) { fields.append(field) }

    mutating func append(_ name: Name, _ value: String) { append(Field(name: name, value: .text(value))) }

    mutating func append(_ name: Name, decimal value: Int) { append(Field(name: name, value: .decimal(value))) }

    /// Content-Range of a 206 for `range` of `size` bytes.
    mutating func appendContentRange(_ range: ClosedRange<Int>, size: Int) {
        append(Field(name: .contentRange, value: .contentRange(first: range.lowerBound, last: range.upperBound, size: size)))
    }

    var httpFields: HTTPFields {
        var out = HTTPFields()
        out.reserveCapacity(fields.count)
        for field in fields { out.append(HTTPField(name: field.name.field, value: field.value.text)) }
        return out
    }

    /// `value` as `HTTPField` would keep it (characters a field value may not hold replaced), for values
    /// that come from outside the server (configuration), checked once rather than per response.
    static func legal(_ value: String) -> String { HTTPField(name: .cacheControl, value: value).value }
}

/// swift-http-types' `HTTPField`, named through `HTTPFields` (Hummingbird re-exports the collection, not its element).
typealias HTTPField = HTTPFields.Element
