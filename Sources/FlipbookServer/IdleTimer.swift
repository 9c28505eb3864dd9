import NIOCore

/// The idle timeout of one keep-alive connection, as Hummingbird's `HTTPConnectionStateHandler` keeps it
/// (and nginx's `keepalive_timeout`): the connection is closed once no request has been in progress for
/// `timeout`; a request that takes longer is never cut. `CachedMediaHandler` owns it because hits answered
/// there never reach the state handler. Used on the channel's event loop only.
final class IdleTimer {
    let timeout: TimeAmount
    private var inProgress = 0
    private var lastActive = NIODeadline.now()
    private var scheduled: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    /// The connection is active: the first request has `timeout` to arrive.
    func start(_ context: ChannelHandlerContext) {
        guard scheduled == nil else { return }
        lastActive = .now()
        schedule(context, at: lastActive + timeout)
    }

    /// A request head was read.
    func requestStarted() { inProgress += 1 }

    /// A response's end was written.
    func requestFinished(_ context: ChannelHandlerContext) {
        inProgress = max(0, inProgress - 1)
        guard inProgress == 0 else { return }
        lastActive = .now()
        if scheduled == nil { schedule(context, at: lastActive + timeout) }
    }

    func stop() {
        scheduled?.cancel()
        scheduled = nil
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        scheduled = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) { [self] in
            scheduled = nil
            // A request in progress reschedules when it finishes.
            guard inProgress == 0 else { return }
            let due = lastActive + timeout
            if due <= .now() {
                context.close(promise: nil)
            } else {
                schedule(context, at: due)
            }
        }
    }
}

@available(*, unavailable)
extension IdleTimer: Sendable {}
