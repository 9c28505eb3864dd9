import Hummingbird
import HummingbirdCore
import NIOCore

/// Answers memory-cache hits of the media routes on the event loop, before a request reaches Hummingbird's
/// async responder, and passes every other request through untouched.
///
/// It sits in the HTTP/1 child channel after `HTTPConnectionStateHandler` (so idle timeouts and graceful
/// shutdown count its requests too) and before the async channel. A request head is held until its end:
/// a GET or HEAD without a body that `FlipbookHTTPServer.cachedAnswer` can answer gets its response written
/// here (head, one slice of the cached buffer, end), flushed when the read completes. Everything else (misses,
/// other routes, bodies, `Connection: close`) goes on to `FlipbookHTTPServer.handle`, which answers it the
/// same way: both paths build the response with the same code.
///
/// Responses leave in request order (HTTP/1.1 pipelining): while any request passed on is unanswered, later
/// ones are passed on too. While the channel is not writable, requests are passed on as well, so a client
/// that pipelines without reading meets the async writer's backpressure instead of an unbounded queue here.
final class CachedMediaHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let server: FlipbookHTTPServer
    /// A head this handler may answer, waiting for its end.
    private var held: HTTPRequest?
    /// Requests passed on whose response end has not been written yet.
    private var passedOn = 0
    /// A request or response said `Connection: close`: the async layer closes the connection after it.
    private var closing = false
    /// Answers written since the last flush.
    private var unflushed = false

    init(server: FlipbookHTTPServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.headerFields[.connection] == "close" { closing = true }
            if closing || passedOn > 0 || !context.channel.isWritable {
                passOn(head, context: context)
            } else {
                held = head
            }
        case .body:
            if let head = held {
                // A body: not a plain GET; the async route reads (and ignores) it.
                held = nil
                passOn(head, context: context)
            }
            context.fireChannelRead(data)
        case .end:
            guard let head = held else { return context.fireChannelRead(data) }
            held = nil
            guard let answer = server.cachedAnswer(head) else {
                passOn(head, context: context)
                return context.fireChannelRead(data)
            }
            context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
            if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
            unflushed = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A parse error: the async layer answers 400 and closes. A held head reaches it first, as it would
        // without this handler.
        closing = true
        if let head = held {
            held = nil
            passOn(head, context: context)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        held = nil
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only the async layer's writes pass here; this handler's own go straight towards the socket.
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.headerFields[.connection] == "close" { closing = true }
        case .body:
            break
        case .end:
            passedOn = max(0, passedOn - 1)
        }
        context.write(data, promise: promise)
    }

    private func passOn(_ head: HTTPRequest, context: ChannelHandlerContext) {
        passedOn += 1
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

@available(*, unavailable)
extension CachedMediaHandler: Sendable {}
