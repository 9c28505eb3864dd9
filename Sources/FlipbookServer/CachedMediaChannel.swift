import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel with `CachedMediaHandler` added right after its
/// `HTTPConnectionStateHandler`, where `HTTP1Channel.Configuration.additionalChannelHandlers` cannot go
/// (they sit before it, so the state handler would not see the requests answered there and would close a
/// busy connection as idle). Everything else, the responder loop included, is `HTTP1Channel`'s.
struct CachedMediaChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let server: FlipbookHTTPServer

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { [server] value in
            let pipeline = channel.pipeline.syncOperations
            let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(CachedMediaHandler(server: server), position: .after(state))
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
