import AsyncHTTPClient
import FlipbookCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP request sent and its answer collected, blocking the calling thread: the decoders that read a
/// remote source run on threads of their own (the CLI's, a worker pool's), never an event loop or Swift's
/// cooperative pool, and wait on AsyncHTTPClient's future here while the exchange runs on SwiftNIO's loops.
///
/// The body is collected up to `limit` bytes (the `Content-Length` is checked before any byte is kept, and
/// the running total while reading), so no answer can make memory grow without bound.
package enum HTTPExchange {
    /// What came back: status, headers and the whole body (at most the limit).
    package struct Answer: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: ByteBuffer

        /// The first value of `name` (case-insensitive).
        package func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Sends `request` with `client` and waits for the whole answer, at most `limit` body bytes, by
    /// `deadline` (the whole exchange: connect, head and body). Throws `.limitExceeded` past the limit,
    /// `.timeout` past the deadline, `.fetchFailed` for a connection that fails or breaks. Never call it on an
    /// event loop or from an async context.
    package static func send(_ request: HTTPClient.Request, with client: HTTPClient, limit: Int, deadline: NIODeadline,
                             describe what: String) throws -> Answer {
        let collector = BoundedCollector(limit: limit, what: what, bodiless: request.method == .HEAD)
        let task = client.execute(request: request, delegate: collector, deadline: deadline)
        do {
            return try task.futureResult.wait()
        } catch {
            throw translate(error, what: what)
        }
    }

    /// The typed error for what AsyncHTTPClient or SwiftNIO threw.
    package static func translate(_ error: any Error, what: String) -> FlipbookError {
        if let error = error as? FlipbookError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return FlipbookError(.timeout, "\(what) did not answer in time", underlying: "\(error)")
            default:
                if "\(error)".contains("decompressionLimit") {
                    return FlipbookError(.limitExceeded, "the body decompresses past the byte limit", underlying: "\(error)")
                }
                return FlipbookError(.fetchFailed, "the request to \(what) failed", underlying: "\(error)")
            }
        }
        let text = "\(error)"
        // swift-nio-extras' NIOHTTPDecompression.DecompressionError.limit: the body inflates past the limit.
        if String(reflecting: type(of: error)).contains("Decompression") && text.contains("limit") {
            return FlipbookError(.limitExceeded, "the body decompresses past the byte limit", underlying: text)
        }
        if error is NIOConnectionError || error is IOError || error is ChannelError {
            return FlipbookError(.fetchFailed, "the connection to \(what) failed", underlying: text)
        }
        return FlipbookError(.fetchFailed, "the request to \(what) failed", underlying: text)
    }
}

/// Collects a response body up to a byte limit. AsyncHTTPClient calls it on one event loop, in order.
private final class BoundedCollector: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = HTTPExchange.Answer

    let limit: Int
    let what: String
    /// A HEAD: its `Content-Length` is the object's, and no body follows.
    let bodiless: Bool
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()

    init(limit: Int, what: String, bodiless: Bool) {
        self.limit = limit
        self.what = what
        self.bodiless = bodiless
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        self.head = head
        // An error answer's body is read (it says why) but a success's length is checked at once. A HEAD's
        // Content-Length (or a 304's) is the object's size, not a body that will come: a HEAD of a 200 MB object
        // used to fail here as over the limit.
        if !bodiless, head.status != .notModified, head.status != .noContent,
           let length = head.headers.first(name: "content-length").flatMap(Int.init), length > limit {
            return task.eventLoop.makeFailedFuture(
                FlipbookError(.limitExceeded, "the file is \(length) bytes, over the limit of \(limit) bytes"))
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard body.readableBytes + buffer.readableBytes <= limit else {
            return task.eventLoop.makeFailedFuture(
                FlipbookError(.limitExceeded, "the file is over the limit of \(limit) bytes (more came than its length said, or it gave none)"))
        }
        var buffer = buffer
        body.writeBuffer(&buffer)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        guard let head else { throw FlipbookError(.fetchFailed, "\(what) sent no answer") }
        return HTTPExchange.Answer(status: Int(head.status.code), headers: head.headers, body: body)
    }
}
