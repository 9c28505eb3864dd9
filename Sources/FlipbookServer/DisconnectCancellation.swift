import NIOCore
import Synchronization

/// Cancels what a request waits for when its client leaves, and otherwise leaves the connection alone.
///
/// Hummingbird's `consumeWithCancellationOnInboundClose` finds out that a client left by reading the
/// connection's inbound stream itself, and so closes the connection after every response it watched: each
/// cold request (a derivative not cached yet) cost its client, or the nginx or CDN in front, a new
/// connection, where nginx and imgproxy keep it. Here `CachedMediaHandler.clientLeft` is the signal: the
/// client's EOF (the server allows half-closure, as Hummingbird sets it, so NIO reports the EOF as an event
/// and keeps the channel open; the channel's own `closeFuture` never fired in the test) or the channel's
/// close. Nothing reads the connection for it, and it stays open for the next request. As with nginx's
/// default (`proxy_ignore_client_abort off`), a client that half-closes after its request counts as gone.
enum DisconnectCancellation {
    /// Runs `operation` and returns its value; throws `CancellationError` (and cancels `operation`) as soon as
    /// `closed` succeeds first. A failed `closed` cancels nothing: a lookup that found no handler, or the
    /// previous request's future, which `CachedMediaHandler.clientLeft` fails when the next one asks.
    static func run<T: Sendable>(until closed: EventLoopFuture<Void>,
                                 _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let watch = Watch()
        closed.whenSuccess { watch.fire() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                await watch.wait()
                return nil
            }
            defer { group.cancelAll() }
            // The first child to end decides: a value, or nil for a closed connection.
            if let first = try await group.next(), let value = first { return value }
            throw CancellationError()
        }
    }

    /// Fired once by the connection's close; a wait ends there or when its task is cancelled.
    private final class Watch: Sendable {
        private struct State: ~Copyable {
            var fired = false
            var waiter: CheckedContinuation<Void, Never>?
        }
        private let state = Mutex(State())

        func fire() {
            state.withLock { s -> CheckedContinuation<Void, Never>? in
                s.fired = true
                defer { s.waiter = nil }
                return s.waiter
            }?.resume()
        }

        func wait() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { s -> Bool in
                        if s.fired || Task.isCancelled { return true }
                        s.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                fire()
            }
        }
    }
}
