@testable import FlipbookWorker
import XCTest

/// How many jobs a worker holds, and when it gives held jobs back (`QueueWorker.HoldLimits`, `JobTimes`).
/// The queue scenarios (`batching`) check the behaviour end to end against PostgreSQL; these check the two
/// cases that decide it with the numbers of real runs.
final class HoldLimitsTests: XCTestCase {
    private func job(_ id: Int64, _ recipe: String) -> Job {
        Job(id: id, source: "s\(id)", recipe: recipe, attempt: 1, maxAttempts: 5)
    }

    /// A probe queue of real uploads: 0.7 ms jobs and, now and then, a 50 MB video that takes 60 ms. The large
    /// one must not make the 128 held jobs look like 128 x 60 ms (7.7 s at two threads: the old decaying
    /// maximum gave them back, then claimed a few at a time), and the limits must stay well above one per
    /// thread.
    func testOneLargeFileDoesNotMakeEveryHeldJobLookSlow() {
        var times = JobTimes()
        for _ in 0..<100 { times.record(recipe: "probe", seconds: 0.0007) }
        XCTAssertEqual(QueueWorker.HoldLimits.limits(concurrency: 2, pace: times.pace).capacity, 130)
        times.record(recipe: "probe", seconds: 0.060)
        let held = (1...128).map { job($0, "probe") }
        let wait = times.wait(for: held[...], threads: 2)
        XCTAssertLessThan(wait, QueueWorker.longWait, "128 short jobs held after one slow one: \(wait) s expected")
        XCTAssertGreaterThan(QueueWorker.HoldLimits.limits(concurrency: 2, pace: times.pace).capacity, 20)
    }

    /// Short probe jobs, then default-recipe videos of 0.3 s (a first video job in the `batching` scenario):
    /// the first video shrinks the limits to one extra job per thread, though the overall average moved only
    /// to 30 ms, and the other held videos (1.5 s of work at two threads) are expected to wait past
    /// `longWait`, so the worker gives back those beyond its limits and does not claim them again at once.
    func testANewKindOfJobShowsAtItsFirstJob() {
        var times = JobTimes()
        for _ in 0..<100 { times.record(recipe: "probe", seconds: 0.0007) }
        times.record(recipe: "default", seconds: 0.3)
        XCTAssertEqual(times.typical ?? 0, 0.03063, accuracy: 1e-5)
        XCTAssertEqual(QueueWorker.HoldLimits.limits(concurrency: 2, pace: times.pace).capacity, 4)
        let held = (1...10).map { job($0, "default") }
        XCTAssertEqual(times.wait(for: held[...], threads: 2), 1.5, accuracy: 1e-9)
        XCTAssertGreaterThan(times.wait(for: held[...], threads: 2), QueueWorker.longWait)
        // A recipe not seen yet is expected to take what recent jobs of any recipe took.
        XCTAssertEqual(times.expected(recipe: "tiny"), times.typical)
    }

    /// Which held jobs are marked started ahead of a thread (their attempt then counts if the worker dies):
    /// millisecond probe jobs behind probe jobs, 50 ms worth for two threads; behind a job of a recipe never
    /// seen, or one running past twice its average, none but the one being dispatched; a job of an unknown
    /// recipe ends the look-ahead.
    func testStartBatchMarksOnlyWhatWillStartSoon() {
        var times = JobTimes()
        for _ in 0..<100 { times.record(recipe: "probe", seconds: 0.001) }
        let probes = (1...200).map { job($0, "probe") }
        let short = times.startBatch(waiting: probes[...], onThreads: [("probe", 0.0005)], threads: 2)
        XCTAssertEqual(short, 99, "100 ms of budget less the running job's 0.5 ms and the first job's 1 ms, 1 ms each")
        XCTAssertEqual(times.startBatch(waiting: probes[...], onThreads: [("board", 0.1)], threads: 2), 1)
        XCTAssertEqual(times.startBatch(waiting: probes[...], onThreads: [("probe", 0.5)], threads: 2), 1)
        let mixed = [job(1, "probe"), job(2, "probe"), job(3, "board"), job(4, "probe")]
        XCTAssertEqual(times.startBatch(waiting: mixed[...], onThreads: [], threads: 2), 2)
        XCTAssertEqual(times.startBatch(waiting: [][...], onThreads: [], threads: 2), 0)
    }

    /// Before the first job nothing is known: one extra job per thread, results written at once.
    func testBeforeTheFirstJob() {
        XCTAssertEqual(QueueWorker.HoldLimits.limits(concurrency: 3, pace: nil),
                       QueueWorker.HoldLimits(capacity: 6, refill: 5, linger: 0))
        XCTAssertEqual(JobTimes().expected(recipe: "probe"), 0)
    }
}
