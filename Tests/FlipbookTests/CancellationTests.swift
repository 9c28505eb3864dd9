import Foundation
import FlipbookTestSupport
import Synchronization
import Testing
@testable import Flipbook

/// Every kind of pipeline stops at a check inside its decode or encode loop, not only at its entry: a
/// token that answers "go on" to its first `allowed` checks and "stop" after lets the work start, so a
/// `.cancelled` error proves a check ran mid-loop. (The CLI's SIGINT token, `Cancellation.requestStop`,
/// is process-wide and sticky, so it is not set here; it is read by the same `isRequested`.)
@Suite(.offPool, .enabled(if: Corpus.available, Corpus.skipMessage))
struct CancellationTests {
    final class Countdown: Sendable {
        let calls = Atomic<Int>(0)
        let allowed: Int
        init(allowing allowed: Int) { self.allowed = allowed }
        func stop() -> Bool { calls.add(1, ordering: .relaxed).newValue > allowed }
    }

    /// The error code of `body` run under a token that allows `allowed` checks, and the checks made.
    func run(allowing allowed: Int, _ body: () throws -> Void) -> (code: FlipbookError.Code?, checks: Int) {
        let countdown = Countdown(allowing: allowed)
        do {
            try Cancellation.watching({ countdown.stop() }) { try body() }
            return (nil, countdown.calls.load(ordering: .relaxed))
        } catch let error as FlipbookError {
            return (error.code, countdown.calls.load(ordering: .relaxed))
        } catch {
            return (.io, 0)
        }
    }

    func input(_ relative: String) throws -> MediaInput { try MediaInput(path: Corpus.file(relative)) }

    @Test func stillThumbnailChecksBeforeDecoding() throws {
        let input = try input("gif/giflib/porsche.gif")
        #expect(run(allowing: 0) { _ = try input.thumbnail(maxPixelSize: 64) }.code == .cancelled)
    }

    @Test func gifThumbnailChecksPerFrame() throws {
        let input = try input("gif/android-gif-drawable/led7.gif")
        let request = ThumbnailRequest(maxPixelSize: 64, frameIndex: 12)
        #expect(run(allowing: 4) { _ = try input.thumbnailImage(request) }.code == .cancelled)
        #expect(run(allowing: 1000) { _ = try input.thumbnailImage(request) }.code == nil)
    }

    @Test func animatedWebPAndAPNGCheckPerFrame() throws {
        for (relative, last) in [("webp/pillow/iss634.webp", 41), ("png/image-png/basic_f20.png", 19)] {
            let input = try input(relative)
            let request = ThumbnailRequest(maxPixelSize: 64, frameIndex: last)
            #expect(run(allowing: 4) { _ = try input.thumbnailImage(request) }.code == .cancelled, "\(relative)")
            #expect(run(allowing: 1000) { _ = try input.thumbnailImage(request) }.code == nil, "\(relative)")
        }
    }

    @Test func conversionChecksPerFrame() throws {
        let path = Corpus.file("gif/android-gif-drawable/led7.gif")
        var options = VideoConversionOptions()
        options.maxSize = 64
        #expect(run(allowing: 4) { _ = try GIFToVideo.convert(try FileByteSource(path: path), options: options) }.code == .cancelled)
        #expect(run(allowing: 1000) { _ = try GIFToVideo.convert(try FileByteSource(path: path), options: options) }.code == nil)
    }

    @Test func videoPreviewAndStoryboardCheckPerFrame() throws {
        let input = try input("video/androidx-media/bear-vp9-odd-dimensions.webm")
        var preview = PreviewOptions()
        preview.size = 64
        #expect(run(allowing: 4) { _ = try VideoPreview.make(input, options: preview) }.code == .cancelled)
        var board = StoryboardOptions()
        board.count = 10
        board.tileSize = 32
        #expect(run(allowing: 4) { _ = try Storyboard.make(input, options: board) }.code == .cancelled)
        let finished = run(allowing: 100_000) { _ = try Storyboard.make(input, options: board) }
        #expect(finished.code == nil && finished.checks > 4)
    }

    /// A cancelled Swift task stops the same loops, with no token at all.
    @Test func taskCancellationStopsAConversion() async throws {
        let path = Corpus.file("gif/android-gif-drawable/led7.gif")
        // The conversion blocks its thread: it runs on the test threads, not on the cooperative pool.
        let code = await Task.detached(executorPreference: TestThreads.shared) { () -> FlipbookError.Code? in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try GIFToVideo.convert(try FileByteSource(path: path))
                return nil
            } catch let error as FlipbookError {
                return error.code
            } catch {
                return .io
            }
        }.value
        #expect(code == .cancelled)
    }
}
