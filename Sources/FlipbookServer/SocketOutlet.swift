import NIOCore

/// The first handler of an HTTP/1 connection's pipeline, next to the socket, through whose context
/// `CachedMediaHandler` writes the responses it serialises itself (`ResponseHead`), past NIO's
/// `HTTPResponseEncoder`. Writes from here and through the encoder join the one queue of the channel's
/// pending writes in the order they are made, on the event loop. Passes everything else on.
final class SocketOutlet: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The handler's context while it is in the pipeline; dropped on removal (the channel's close
    /// included), which ends the cycle between the two.
    private(set) var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes `data` towards the socket; fails `promise` if the handler has left the pipeline.
    func write(_ data: IOData, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(data), promise: promise)
    }
}

@available(*, unavailable)
extension SocketOutlet: Sendable {}
