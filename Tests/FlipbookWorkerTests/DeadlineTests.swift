@testable import FlipbookWorker
import NIOCore
import NIOPosix
import Synchronization
import XCTest

/// `Deadline`: the worker's guard against a PostgreSQL call that never answers. Each test waits for the
/// outcome itself (no test deadline): under load the sweeper may run late, never wrongly.
final class DeadlineTests: XCTestCase {
    /// A call that ignores cancellation and never returns (as PostgresNIO's in-flight query did across a
    /// PostgreSQL restart) still ends, with `QueryTimeout`, no sooner than its deadline.
    func testACallThatNeverAnswersEndsWithQueryTimeout() async throws {
        let deadline = Deadline(seconds: 0.3, resolution: 0.05)
        let stuck = Stuck()
        let start = ContinuousClock.now
        do {
            _ = try await deadline.run { await stuck.wait() }
            XCTFail("a call that never returns returned")
        } catch let error as QueryTimeout {
            XCTAssertEqual(error.seconds, 0.3)
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300))
        XCTAssertEqual(deadline.armedCount, 0)
        stuck.release()  // the abandoned operation ends now; its result is dropped
    }

    /// Calls that answer return their value or error and leave nothing armed, so the sweeper stops and a
    /// late sweep cannot fail a call that already returned. The deadline is far beyond any answer here: the
    /// 200 calls' tasks and the sweeper share the cooperative pool, and with other suites blocking it a short
    /// deadline could expire calls whose tasks had not yet run.
    func testCallsThatAnswerReturnTheirResultAndLeaveNothingArmed() async throws {
        let deadline = Deadline(seconds: 120, resolution: 0.05)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<200 { group.addTask { try await deadline.run { i * 2 } } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(values.sorted(), (0..<200).map { $0 * 2 })
        XCTAssertEqual(deadline.armedCount, 0)
        struct Refused: Error {}
        do {
            _ = try await deadline.run { () async throws -> Int in throw Refused() }
            XCTFail("the error was lost")
        } catch is Refused {}
        // Past several sweeps: the sweeper found nothing armed and ended; a new call starts another and works.
        try await Task.sleep(for: .milliseconds(500))
        let seven = try await deadline.run { 7 }
        XCTAssertEqual(seven, 7)
        XCTAssertEqual(deadline.armedCount, 0)
    }

    /// `wait(on:for:)`, the sessions' form (no task of its own): a future that never completes ends with
    /// `QueryTimeout` no sooner than the deadline; futures that complete return their value or error, and a
    /// completion after the timeout is dropped.
    func testWaitingForAFuture() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let deadline = Deadline(seconds: 0.3, resolution: 0.05)
        let never = loop.makePromise(of: Int.self)
        let start = ContinuousClock.now
        do {
            _ = try await deadline.wait(on: loop) { never.futureResult }
            XCTFail("a future that never completes returned")
        } catch let error as QueryTimeout {
            XCTAssertEqual(error.seconds, 0.3)
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300))
        XCTAssertEqual(deadline.armedCount, 0)
        never.succeed(1)  // late: nobody is resumed twice

        let patient = Deadline(seconds: 120, resolution: 0.05)
        let value = try await patient.wait(on: loop) { loop.scheduleTask(in: .milliseconds(20)) { 42 }.futureResult }
        XCTAssertEqual(value, 42)
        struct Refused: Error {}
        do {
            _ = try await patient.wait(on: loop) { loop.makeFailedFuture(Refused()) as EventLoopFuture<Int> }
            XCTFail("the error was lost")
        } catch is Refused {}
        XCTAssertEqual(patient.armedCount, 0)
        try await group.shutdownGracefully()
    }
}

/// An operation that ignores cancellation and waits until `release()`.
private final class Stuck: Sendable {
    private let waiter = Mutex<(released: Bool, continuation: CheckedContinuation<Int, Never>?)>((false, nil))

    func wait() async -> Int {
        await withCheckedContinuation { continuation in
            let resumeNow = waiter.withLock { w -> Bool in
                if w.released { return true }
                w.continuation = continuation
                return false
            }
            if resumeNow { continuation.resume(returning: 0) }
        }
    }

    func release() {
        waiter.withLock { w -> CheckedContinuation<Int, Never>? in
            w.released = true
            defer { w.continuation = nil }
            return w.continuation
        }?.resume(returning: 0)
    }
}
