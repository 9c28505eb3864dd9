import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of threads for blocking decode and encode work, with a bounded queue in front.
///
/// The threads are our own (pthreads), so C work never blocks SwiftNIO's event loops or Swift's
/// cooperative pool. `submit` fails at once with `DerivativeServiceError.busy` when `queueLimit` jobs are
/// already waiting. Sized by the caller to the cores; libav's own threads are kept at 1 per job by default.
package final class WorkerPool: Sendable {
    package typealias Job = @Sendable () -> Void

    private final class Signal: @unchecked Sendable {
        var mutex = pthread_mutex_t()
        var condition = pthread_cond_t()
        init() {
            pthread_mutex_init(&mutex, nil)
            pthread_cond_init(&condition, nil)
        }
        deinit {
            pthread_cond_destroy(&condition)
            pthread_mutex_destroy(&mutex)
        }
    }

    private struct State {
        var queue: [Job] = []
        var head = 0
        var running = 0
        var stopping = false
        var waiting: Int { queue.count - head }
    }

    let threads: Int
    let queueLimit: Int
    private let signal = Signal()
    // Guarded by `signal.mutex`, not by the Mutex's own lock (which only satisfies the compiler).
    private nonisolated(unsafe) var state = State()

    package init(threads: Int, queueLimit: Int) {
        self.threads = max(1, threads)
        self.queueLimit = max(0, queueLimit)
        for _ in 0..<self.threads { spawn() }
    }

    /// Jobs waiting for a thread, and jobs running.
    var depth: (waiting: Int, running: Int) {
        pthread_mutex_lock(&signal.mutex)
        defer { pthread_mutex_unlock(&signal.mutex) }
        return (state.waiting, state.running)
    }

    /// Queues `job`, or throws `.busy` if the queue is full. A free thread picks it up at once.
    package func submit(_ job: @escaping Job) throws {
        pthread_mutex_lock(&signal.mutex)
        defer { pthread_mutex_unlock(&signal.mutex) }
        // Jobs beyond the idle threads wait; at most `queueLimit` of them.
        if state.waiting + state.running >= threads + queueLimit {
            throw DerivativeServiceError.busy(retryAfterSeconds: 1)
        }
        state.queue.append(job)
        pthread_cond_signal(&signal.condition)
    }

    /// Runs `body` on a pool thread and returns its result to the awaiting task.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            do {
                try submit { continuation.resume(with: Result { try body() }) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private func next() -> Job? {
        pthread_mutex_lock(&signal.mutex)
        defer { pthread_mutex_unlock(&signal.mutex) }
        while state.waiting == 0 {
            if state.stopping { return nil }
            pthread_cond_wait(&signal.condition, &signal.mutex)
        }
        let job = state.queue[state.head]
        state.head += 1
        if state.head > 64 && state.head * 2 > state.queue.count {
            state.queue.removeFirst(state.head)
            state.head = 0
        }
        state.running += 1
        return job
    }

    private func finished() {
        pthread_mutex_lock(&signal.mutex)
        state.running -= 1
        pthread_mutex_unlock(&signal.mutex)
    }

    private func spawn() {
        final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
        let box = Box { [self] in
            Self.nameThisThread()
            while let job = self.next() {
                job()
                self.finished()
            }
        }
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)  // decoders recurse little, but libav wants room
        let context = Unmanaged.passRetained(box).toOpaque()
        pthread_create(&thread, &attributes, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        pthread_detach(thread)
    }
}

extension WorkerPool {
    /// Names the calling thread `flipbook-pool`, so `top -H`, perf and a debugger tell the pool's threads from
    /// the event loops and libav's (the worker's tests find the thread running a job by it). Through
    /// `/proc/thread-self/comm`, which renames this thread only: Glibc's module does not export
    /// `pthread_setname_np`. Three syscalls, once per thread; where /proc is missing the thread keeps its name.
    static func nameThisThread() {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let name = "flipbook-pool"
        _ = name.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Lets the threads end once the queue is empty. Jobs already queued still run.
    package func shutdown() {
        pthread_mutex_lock(&signal.mutex)
        state.stopping = true
        pthread_cond_broadcast(&signal.condition)
        pthread_mutex_unlock(&signal.mutex)
    }
}
