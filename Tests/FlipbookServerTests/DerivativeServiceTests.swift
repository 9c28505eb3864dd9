import Flipbook
import Foundation
import FlipbookService
import Synchronization
import Testing

/// The front object without HTTP: cancellation reaching the decode loop, the memory cache's byte limit.
@Suite(.serialized) struct DerivativeServiceTests {
    final class Flag: Sendable {
        let isSet = Mutex(false)
    }

    @Test func aJobNobodyWaitsForIsCancelledBetweenFrames() async throws {
        let root = try Env.makeRoot("cancel")
        let made = try await Env.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=480x360:rate=25", "-t", "8", "-y",
                                                         root + "/long.gif"])
        try #require(made.status == 0)
        let (ended, jobEnded) = AsyncStream<(kind: String, failed: Bool)>.makeStream()
        var configuration = DerivativeService.Configuration(root: root)
        configuration.workers = 1
        let service = try DerivativeService(configuration: configuration) { event in
            if case .job(let kind, _, let failed) = event { jobEnded.yield((kind, failed)) }
        }
        let taskEnded = Flag()
        let task = Task {
            defer { taskEnded.isSet.withLock { $0 = true } }
            return try await service.derivative(DerivativeRequest(path: "long.gif", operation: .mp4(maxSize: nil)))
        }
        // Cancels as soon as the job is on the worker, from a thread of its own: waiting on the cooperative pool
        // would let a busy pool delay the cancel until after the job had finished. No deadline: the wait ends
        // when the job runs (or, if it never could, when the task has ended).
        let sawRunning = Flag()
        let canceller = Thread {
            while service.queueDepth.running == 0 && !taskEnded.isSet.withLock({ $0 }) { usleep(100) }
            let running = service.queueDepth.running == 1
            sawRunning.isSet.withLock { $0 = running }
            task.cancel()
        }
        canceller.start()
        await #expect(throws: CancellationError.self) { try await task.value }
        try #require(sawRunning.isSet.withLock { $0 }, "the job never started on the worker")
        // The worker stops at the next frame: the job ends failed, long before the 200 frames are encoded.
        // How soon is a bench figure; here the job must end failed (cancelled), not as a finished encode.
        var jobs = ended.makeAsyncIterator()
        let job = await jobs.next()
        #expect(job?.kind == "mp4" && job?.failed == true)
        // The event is sent from the job itself, just before its worker counts it finished.
        while service.queueDepth.running > 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(service.memoryCacheUsage.count == 0)
    }

    @Test func oneWaiterLeavingDoesNotCancelTheOthers() async throws {
        let root = try Env.makeRoot("cancel-one")
        let service = try DerivativeService(configuration: DerivativeService.Configuration(root: root))
        let request = DerivativeRequest(path: "testsrc-160x120-2s.gif", operation: .mp4(maxSize: 100))
        // The job starts for the waiter that stays; the second joins it and leaves.
        let staying = Task { try await service.derivative(request) }
        while service.jobsRun["mp4", default: 0] == 0 && service.queueDepth.running == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let leaving = Task { try await service.derivative(request) }
        try await Task.sleep(for: .milliseconds(20))
        leaving.cancel()
        let result = try await staying.value
        #expect(result.size > 0)
        #expect(service.jobsRun["mp4"] == 1)
    }

    @Test func memoryCacheKeepsWithinItsByteLimit() async throws {
        let root = try Env.makeRoot("lru")
        var configuration = DerivativeService.Configuration(root: root)
        configuration.memoryCacheBytes = 100_000
        configuration.memoryCacheEntryFraction = 0.5
        let service = try DerivativeService(configuration: configuration)
        for size in stride(from: 200, to: 280, by: 4) {
            let d = try await service.derivative(DerivativeRequest(path: "mandelbrot-1600x1200.jpg", operation: .thumb(ThumbnailRequest(maxPixelSize: size))))
            #expect(d.size > 0)
            #expect(service.memoryCacheUsage.bytes <= 100_000)
        }
        #expect(service.memoryCacheUsage.count < 20)
        // The most recent is a hit; the first was evicted and runs again.
        let jobs = service.jobsRun["thumb"] ?? 0
        let hit = try await service.derivative(DerivativeRequest(path: "mandelbrot-1600x1200.jpg", operation: .thumb(ThumbnailRequest(maxPixelSize: 276))))
        #expect(hit.cache == .memory && service.jobsRun["thumb"] == jobs)
        _ = try await service.derivative(DerivativeRequest(path: "mandelbrot-1600x1200.jpg", operation: .thumb(ThumbnailRequest(maxPixelSize: 200))))
        #expect(service.jobsRun["thumb"] == jobs + 1)
    }

    @Test func linksToOneFileShareDerivatives() async throws {
        let root = try Env.makeRoot("links")
        try FileManager.default.createSymbolicLink(atPath: root + "/link-a.gif", withDestinationPath: root + "/testsrc-160x120-2s.gif")
        try FileManager.default.linkItem(atPath: root + "/testsrc-160x120-2s.gif", toPath: root + "/hard-b.gif")
        let service = try DerivativeService(configuration: DerivativeService.Configuration(root: root))
        for path in ["testsrc-160x120-2s.gif", "link-a.gif", "hard-b.gif"] {
            _ = try await service.derivative(DerivativeRequest(path: path, operation: .mp4(maxSize: 64)))
        }
        #expect(service.jobsRun["mp4"] == 1)
    }

    @Test func diskCacheTrimsToSeventyPercent() async throws {
        let root = try Env.makeRoot("trim")
        let cache = try Env.temporaryFolder("trim-cache")
        var configuration = DerivativeService.Configuration(root: root)
        configuration.diskCacheDirectory = cache
        configuration.diskCacheBytes = 60_000
        configuration.memoryCacheBytes = 0
        let service = try DerivativeService(configuration: configuration)
        for size in stride(from: 300, to: 340, by: 4) {
            _ = try await service.derivative(DerivativeRequest(path: "mandelbrot-1600x1200.jpg", operation: .thumb(ThumbnailRequest(maxPixelSize: size))))
        }
        let objects = try FileManager.default.subpathsOfDirectory(atPath: cache + "/objects").filter { $0.count > 60 }
        let total = try objects.reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: cache + "/objects/" + $1)[.size] as? Int) ?? 0) }
        #expect(total <= 60_000, "\(total) bytes in \(objects.count) objects")
        #expect(!objects.isEmpty)
    }
}
