import NIOCore

/// Raises a connection's write-buffer water marks (NIO's default: 32 KB low, 64 KB high) and leaves the
/// pipeline. With the default, every response over 64 KB (a 64 KB range plus its head, say) made the
/// channel unwritable and writable again: two state changes through the async writer per request. The
/// bodies are slices of cached buffers, so letting more of them queue copies nothing.
final class WriteBufferLimits: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    static let marks = ChannelOptions.Types.WriteBufferWaterMark(low: 512 * 1024, high: 2 * 1024 * 1024)

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: Self.marks)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
