import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 child channel with `CachedMediaHandler` added right after NIO's request decoder,
/// before the conversion to swift-http-types (`HTTP1Channel.Configuration.additionalChannelHandlers` go after
/// it). `http1` is configured without an idle timeout: the handler keeps it, since the requests it answers never
/// reach Hummingbird's `HTTPConnectionStateHandler`. Everything else, the responder loop included, is
/// `HTTP1Channel`'s.
struct CachedMediaChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let server: FlipbookHTTPServer
    let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { [server, idleTimeout] value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(CachedMediaHandler(server: server, idleTimeout: idleTimeout), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension NIOAsyncChannel {
    /// The element type the channel reads.
    typealias InboundPart = Inbound
    /// The element type the channel writes.
    typealias OutboundPart = Outbound
}

/// swift-nio-extras' `HTTPRequestPart` (an `HTTPRequest` head, body buffers, an end), named through the
/// channel type Hummingbird exposes rather than a dependency of this target on swift-nio-extras.
typealias HTTPRequestPart = HTTP1Channel.Value.InboundPart
/// swift-nio-extras' `HTTPResponsePart`, named the same way.
typealias HTTPResponsePart = HTTP1Channel.Value.OutboundPart
