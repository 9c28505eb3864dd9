import Flipbook
import Hummingbird
import NIOCore

/// A whole response whose body is at most one buffer: what the media route and the JSON errors make.
/// The async route hands it to Hummingbird as a `Response`; `CachedMediaHandler` writes its parts itself.
/// Both paths therefore send the same status line, headers (in the same order) and body.
struct BufferedResponse {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    /// The body; nil for a 304 (no body, no Content-Length) and for a HEAD (GET's headers, no body).
    var body: ByteBuffer?

    /// A response with `body`, whose length is appended as Content-Length after `headers` (which have none).
    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.headers.append(HTTPField(name: .contentLength, value: String(body.readableBytes)))
        self.body = body
    }

    /// A response without a body or Content-Length (a 304).
    init(status: HTTPResponse.Status, headers: HTTPFields) {
        self.status = status
        self.headers = headers
        body = nil
    }

    /// A JSON error `{"error": code, "message": ...}`, not to be cached.
    static func error(_ status: Int, _ code: String, _ message: String) -> BufferedResponse {
        let json = "{\"error\": \(JSON.string(code)), \"message\": \(JSON.string(message))}\n"
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return BufferedResponse(status: HTTPResponse.Status(code: status), headers: headers, body: ByteBuffer(string: json))
    }

    /// The status line and headers.
    var head: HTTPResponse { HTTPResponse(status: status, headerFields: headers) }

    /// The same response for Hummingbird's responder.
    var response: Response {
        if let body { return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body)) }
        return Response(status: status, headers: headers, body: ResponseBody { writer in try await writer.finish(nil) })
    }
}

/// swift-http-types' `HTTPField`, named through `HTTPFields` (Hummingbird re-exports the collection, not its element).
typealias HTTPField = HTTPFields.Element
