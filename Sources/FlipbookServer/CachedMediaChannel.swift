import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 child channel with `CachedMediaHandler` added right after NIO's request decoder,
/// before the conversion to swift-http-types (`HTTP1Channel.Configuration.additionalChannelHandlers` go after
/// it); the handler writes what it serialises itself through the response encoder's context. `http1` is
/// configured without an idle timeout: the handler keeps it, since the requests it answers never reach
/// Hummingbird's `HTTPConnectionStateHandler`. Everything else, the responder loop included, is
/// `HTTP1Channel`'s.
///
/// NIO's `configureHTTPServerPipeline` pairs its request decoder with its response encoder: the decoder queues
/// each request's method in the encoder, which pops one per response head to frame answers to HEAD without a
/// body. The answers the handler writes past the encoder would leave that queue one entry longer each, and
/// out of step, so the pair is replaced with an unpaired decoder (the same limits) and encoder, and the
/// handler does that bookkeeping for the requests it passes on.
struct CachedMediaChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let server: FlipbookHTTPServer
    let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMap { [server, idleTimeout, http1] value in
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = http1.configuration.httpDecoder.maxHeaderFieldSize
            limits.maxHeaderListSize = http1.configuration.httpDecoder.maxHeaderListSize
            limits.maxHeaderFieldCount = http1.configuration.httpDecoder.maxHeaderFieldCount
            return Self.install(in: channel, server: server, idleTimeout: idleTimeout, decoderLimits: limits).map { value }
        }
    }

    /// Replaces the paired encoder and decoder `configureHTTPServerPipeline` put in `channel`'s pipeline with
    /// unpaired ones (the decoder with `decoderLimits`) and adds `CachedMediaHandler` after the decoder.
    /// Completes once the paired decoder has left: a `ByteToMessageHandler` leaves on a later turn of the event
    /// loop, and the new decoder must not be added before (it would be fed the old one's output). A channel set
    /// up in a server bootstrap is registered, and read, only after its setup completes.
    static func install(in channel: any Channel, server: FlipbookHTTPServer, idleTimeout: TimeAmount,
                        decoderLimits: NIOHTTPDecoderLimitConfiguration) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            let pairedEncoder = try pipeline.handler(type: HTTPResponseEncoder.self)
            let pairedDecoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let encoder = HTTPResponseEncoder(configuration: .init())
            try pipeline.addHandler(encoder, position: .after(pairedEncoder))
            pipeline.removeHandler(pairedEncoder, promise: nil)
            return pipeline.removeHandler(pairedDecoder).assumeIsolated().flatMapThrowing {
                let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits))
                try pipeline.addHandler(decoder, position: .after(encoder))
                let socket = try pipeline.context(handler: encoder)
                try pipeline.addHandler(CachedMediaHandler(server: server, idleTimeout: idleTimeout, socket: socket), position: .after(decoder))
            }.nonisolated()
        }.flatMap { $0 }
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
