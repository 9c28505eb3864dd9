import FlipbookService
import Hummingbird
import NIOCore
import NIOHTTP1

/// Answers memory-cache hits of the media routes on the event loop, before a request reaches Hummingbird's
/// async responder, and passes every other request through untouched.
///
/// It sits in the HTTP/1 child channel right after NIO's request decoder, before swift-nio-extras'
/// `HTTP1ToHTTPServerCodec`, so a hit is read and answered in NIO's HTTP/1 types: it skips the codec's
/// conversion of each request and response (a `Foundation.URLComponents` parse of the target and a validated
/// `HTTPFields` each way) and the handlers behind it. Its response still goes through NIO's
/// `HTTPResponseEncoder`, which frames HEAD and 304 answers from the request method the decoder recorded.
///
/// A request head is held until its end: an origin-form GET or HEAD without a body, on a keep-alive
/// connection, that `FlipbookHTTPServer.cachedAnswer` can answer gets its response written here (head, one
/// slice of the cached buffer), flushed when the read completes. Everything else (misses, other routes,
/// bodies, `Connection: close`, HTTP/1.0 without keep-alive) goes on to `FlipbookHTTPServer.handle`, which
/// answers it the same way: both paths build the response with the same code.
///
/// A hit's head is serialised here (`ResponseHead`) and written with its body on the context of NIO's
/// `HTTPResponseEncoder`, which leads past the encoder straight to the socket: the encoder's per-field
/// writes were a fifth of a hit's instructions. (A handler of our own next to the socket would add a hop to
/// every read, write and flush event: 0.5k instructions a hit, measured.) Writes made there and through the
/// encoder join the channel's one queue of pending writes in the order they are made. The encoder is unpaired
/// (`CachedMediaChannel`), so this handler keeps what the paired one kept: the method of every request it
/// passes on, so that the answer to a HEAD (or CONNECT) request leaves without a body. Such an answer's head
/// is serialised here too, with the encoder's framing rules, and its body parts are dropped.
///
/// Responses leave in request order (HTTP/1.1 pipelining): while any request passed on is unanswered, later
/// ones are passed on too. While the channel is not writable, requests are passed on as well, so a client
/// that pipelines without reading meets the async writer's backpressure instead of an unbounded queue here.
///
/// Hummingbird's `HTTPConnectionStateHandler` behind it sees only the requests passed on, so the idle timeout
/// of keep-alive connections is kept here, where every request and response passes (`IdleTimer`); the state
/// handler keeps graceful shutdown.
final class CachedMediaHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let server: FlipbookHTTPServer
    /// The response encoder's context: what is written on it goes to the socket. Dropped when this handler
    /// leaves the pipeline.
    private var socket: ChannelHandlerContext?
    /// A head this handler may answer, waiting for its end.
    private var held: HTTPRequestHead?
    /// Requests passed on whose response end has not been written yet.
    private var passedOn = 0
    /// The methods of requests passed on whose final response head has not been written yet, oldest first.
    private var awaiting = CircularBuffer<HTTPMethod>(initialCapacity: 4)
    /// The response being written answers HEAD or CONNECT: its head has been written here, its body parts and
    /// end are dropped.
    private var bodiless = false
    /// A request or response said `Connection: close`: the async layer closes the connection after it.
    private var closing = false
    /// Answers written since the last flush.
    private var unflushed = false
    private var idle: IdleTimer
    /// The client's side of the connection has ended: its EOF (the server allows half-closure, so the channel
    /// stays open and only the `inputClosed` event says so) or the channel's close.
    private var clientGone = false
    /// What the cold request being answered now waits on (`clientLeft`), succeeded when the client leaves.
    private var leaving: EventLoopPromise<Void>?
    /// The disk-cache object this connection last sent from, and the `NIOFileHandle` around its descriptor
    /// that its `FileRegion`s share (see `writeToSocket(_:context:)`).
    private var sending: Sending?

    private struct Sending {
        let file: CachedFile
        let handle: NIOFileHandle

        /// Gives the descriptor back to `file` without closing it; `file` closes it once nobody holds it.
        func giveBack() {
            _ = try? handle.takeDescriptorOwnership()
            withExtendedLifetime(file) {}
        }
    }

    init(server: FlipbookHTTPServer, idleTimeout: TimeAmount, socket: ChannelHandlerContext) {
        self.server = server
        self.socket = socket
        idle = IdleTimer(timeout: idleTimeout)
    }

    /// A future that succeeds when the client leaves; a cold request's wait for its job is cancelled by it
    /// (`DisconnectCancellation`). On the event loop. HTTP/1 answers one request at a time, so a new call fails
    /// the previous request's future, and a long keep-alive connection holds one, not one per cold request.
    func clientLeft(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        leaving?.fail(Superseded())
        leaving = nil
        if clientGone { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        leaving = promise
        return promise.futureResult
    }

    private struct Superseded: Error {}

    private func markClientGone() {
        clientGone = true
        leaving?.succeed()
        leaving = nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { idle.start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        idle.start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        socket = nil
        idle.stop()
        markClientGone()
        if let sending {
            self.sending = nil
            // A closed channel has failed (dropped) its queued writes before its handlers go; a handler removed
            // from an open one leaves them queued, so the descriptor goes back once the channel closes.
            if context.channel.isActive {
                context.channel.closeFuture.whenComplete { _ in sending.giveBack() }
            } else {
                sending.giveBack()
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { markClientGone() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            idle.requestStarted()
            if !head.isKeepAlive { closing = true }
            // (A pattern, not `!=`: HTTPMethod's `==` compares the methods' names as strings.)
            let isGETOrHEAD = switch head.method { case .GET, .HEAD: true; default: false }
            if closing || passedOn > 0 || !context.channel.isWritable || !isGETOrHEAD || head.uri.utf8.first != UInt8(ascii: "/") {
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
            let isHEAD = if case .HEAD = head.method { true } else { false }
            guard let answer = server.cachedAnswer(isHEAD: isHEAD, target: head.uri, request: ConditionalHeaders(head.headers)) else {
                passOn(head, context: context)
                return context.fireChannelRead(data)
            }
            writeToSocket(ResponseHead.encode(status: answer.status, fields: answer.headers, allocator: context.channel.allocator), promise: nil)
            switch answer.body {
            case .buffer(let body): writeToSocket(body, promise: nil)
            case .file(let slice): writeToSocket(slice, context: context)
            case .none: break
            }
            idle.requestFinished(context)
            unflushed = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            // From the encoder's context, as the answers were written: the flush skips the encoder's hop.
            if let socket { socket.flush() } else { context.flush() }
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
        idle.stop()
        markClientGone()
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only the async layer's writes pass here; this handler's own go to the socket directly.
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if !head.isKeepAlive { closing = true }
            // A non-final 1xx head is followed by the final one, which answers the same request (as NIO's encoder).
            let code = head.status.code
            if !(100..<200).contains(code) || code == 101 {
                let method = awaiting.popFirst()
                bodiless = method == .HEAD || method == .CONNECT
                if bodiless {
                    let bytes = ResponseHead.encode(head, respondingToConnect: method == .CONNECT, allocator: context.channel.allocator)
                    writeToSocket(bytes, promise: promise)
                    return
                }
            }
        case .body:
            if bodiless {
                promise?.succeed()
                return
            }
        case .end:
            passedOn = max(0, passedOn - 1)
            idle.requestFinished(context)
            if bodiless {
                bodiless = false
                promise?.succeed()
                return
            }
        }
        context.write(data, promise: promise)
    }

    /// Writes `bytes` past the response encoder; fails `promise` once the pipeline is gone.
    private func writeToSocket(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let socket else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        socket.write(NIOAny(IOData.byteBuffer(bytes)), promise: promise)
    }

    /// Writes a range of a disk-cache object past the response encoder as a `FileRegion`, which NIO sends with
    /// `sendfile`. The object's descriptor is shared by every response that sends it (its offsets are explicit,
    /// so they do not disturb each other). NIO wants a `NIOFileHandle` around it, which allows one use at a
    /// time: one per connection (on one event loop, so its writes never overlap), made when the connection
    /// first sends that object and reused while it sends the same one (a player's ranges of one video), so a
    /// hit allocates no handle and waits on no promise. `sending` keeps the `CachedFile` referenced, so its
    /// descriptor outlives every queued write even when the cache drops the entry. When the connection moves
    /// on to another object, the old handle gives its descriptor back once this write is done or failed: writes
    /// complete in the order they are queued, so every earlier write of the old object has completed by then.
    private func writeToSocket(_ slice: BufferedResponse.FileSlice, context: ChannelHandlerContext) {
        guard let socket else { return }
        let handle: NIOFileHandle
        var released: EventLoopPromise<Void>?
        if let sending, sending.file === slice.file {
            handle = sending.handle
        } else {
            if let previous = sending {
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { _ in previous.giveBack() }
                released = promise
            }
            handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: slice.file.descriptor)
            sending = Sending(file: slice.file, handle: handle)
        }
        let region = FileRegion(fileHandle: handle, readerIndex: slice.offset, endIndex: slice.offset + slice.length)
        server.fileAnswers.add(1, ordering: .relaxed)
        socket.write(NIOAny(IOData.fileRegion(region)), promise: released)
    }

    private func passOn(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        passedOn += 1
        awaiting.append(head.method)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

@available(*, unavailable)
extension CachedMediaHandler: Sendable {}
