// `swift build` builds this target too; a release build with --static-swift-stdlib has no Testing module
// (swift_static holds none), so there the target is empty.
#if canImport(Testing)
import Foundation
import Testing

/// Test bodies off Swift's cooperative pool.
///
/// Swift Testing runs every test body on the cooperative pool, which has one thread per core (two on CI).
/// A synchronous test that decodes, encodes or waits for a child process holds its thread until it ends,
/// so two such tests in parallel suites starve everything else that needs the pool: the service's async
/// front, the in-process server's handlers, the continuation of an async test. A test then waits for work
/// that never gets a thread. `.offPool` on a suite (or a test) runs its bodies on `TestThreads` instead, a
/// few threads of our own, and leaves the pool to the code under test.
public struct OffPool: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OffPool? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OffPool {
    /// Runs the test bodies on `TestThreads`, not on the cooperative pool.
    public static var offPool: OffPool { OffPool() }
}

/// A task executor of `count` threads (one per core): a FIFO queue of jobs, each run to its end on one thread.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    public static let shared = TestThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in
                Thread.current.threadDictionary[Self.marker] = true
                run()
            }
            thread.name = "test-thread-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private static let marker = "FlipbookTestSupport.TestThreads"

    /// Whether the calling thread is one of `TestThreads`'.
    public static var isCurrentThread: Bool { Thread.current.threadDictionary[marker] != nil }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head > 256 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs blocking `body` (a child process, a sleep, a long conversion) on a thread of its own and awaits its
/// result, so an async test's blocking step never holds a thread of the cooperative pool.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
#endif
