import Synchronization

/// Wakes the claim loop: a NOTIFY arrived, a job finished, the poll interval passed, or stop was asked.
/// A signal with nobody waiting is kept for the next wait.
final class Wakeup: Sendable {
    private struct State: ~Copyable {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func signal() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal, or after `seconds`.
    func wait(seconds: Double) async {
        let timer = Task { [self] in
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { signal() }
        }
        await wait()
        timer.cancel()
    }

    /// Returns at the next signal. The claim loop waits here, and a poller of its own signals every poll
    /// interval: a timer per wait (a task sleeping for the interval, cancelled at the next signal) left a
    /// libdispatch timer behind each time, and a busy worker waits hundreds of times a second.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
