import Foundation
import FlipbookTestSupport
import Testing

/// `.offPool` really moves a suite's bodies off the cooperative pool: synchronous and async bodies alike run
/// on `TestThreads`' threads, and `offPool` runs its closure on a thread that is neither.
@Suite(.offPool) struct OffPoolTests {
    @Test func aSynchronousBodyRunsOnATestThread() {
        #expect(TestThreads.isCurrentThread)
    }

    @Test func anAsyncBodyRunsOnATestThread() async throws {
        #expect(TestThreads.isCurrentThread)
        try await Task.sleep(for: .milliseconds(1))  // resumes on the preferred executor too
        #expect(TestThreads.isCurrentThread)
        #expect(try await offPool { TestThreads.isCurrentThread } == false)
    }
}

/// Without the trait a body runs on the cooperative pool: the check above can tell the two apart.
@Suite struct OnPoolTests {
    @Test func aBodyWithoutTheTraitRunsOnThePool() {
        #expect(!TestThreads.isCurrentThread)
    }
}
