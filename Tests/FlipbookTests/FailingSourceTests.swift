import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// A source whose reads fail partway (a remote object replaced mid-read, a connection that broke) must stop
/// every decoder with the source's own error: never "truncated", never an output made from part of the input.
/// libav, giflib and libpng read through C callbacks that cannot throw, so each bridge keeps the error and the
/// decoder rethrows it.
@Suite(.offPool) struct FailingSourceTests {
    /// The bytes of `path`, with every read that reaches past `failAfter` throwing `.sourceChanged`.
    struct FailingSource: ByteSource {
        let inner: FileByteSource
        let failAfter: Int
        var count: Int { inner.count }
        var bytesRead: Int { inner.bytesRead }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
            if offset + min(buffer.count, count - offset) > failAfter {
                throw FlipbookError(.sourceChanged, "the object changed while it was read")
            }
            return try inner.read(into: buffer, at: offset)
        }
        func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
            throw FlipbookError(.sourceChanged, "the object changed while it was read")
        }
    }

    static func source(_ sample: String, failingAt fraction: Double) throws -> FailingSource {
        let file = try FileByteSource(path: packageRoot.appendingPathComponent("samples/\(sample)").path)
        return FailingSource(inner: file, failAfter: Int(Double(file.count) * fraction))
    }

    static func expectSourceChanged(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(what): no error: made from part of the input")
        } catch let error as FlipbookError {
            #expect(error.code == .sourceChanged, "\(what): \(error.code) \(error)")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }

    @Test func everyDecoderRethrowsTheSourcesError() throws {
        Self.expectSourceChanged("JPEG thumbnail") {
            _ = try MediaInput(source: try Self.source("mandelbrot-1600x1200.jpg", failingAt: 0.5)).thumbnail(maxPixelSize: 64)
        }
        Self.expectSourceChanged("PNG thumbnail") {
            _ = try MediaInput(source: try Self.source("alpha-640x480.png", failingAt: 0.5)).thumbnail(maxPixelSize: 64)
        }
        Self.expectSourceChanged("GIF to MP4") {
            _ = try GIFToVideo.convert(try Self.source("testsrc-160x120-2s.gif", failingAt: 0.5))
        }
        Self.expectSourceChanged("GIF frames") {
            let frames = try FrameSources.open(try Self.source("testsrc-160x120-2s.gif", failingAt: 0.5))
            try frames.forEachFrame { _, _ in true }
        }
        Self.expectSourceChanged("video poster") {
            _ = try MediaInput(source: try Self.source("testsrc2-480x270-4s.mp4", failingAt: 0.6)).thumbnail(
                ThumbnailRequest(maxPixelSize: 64, fit: .inside, upscale: false, format: .jpeg, frameIndex: 0))
            // The default poster position is early: read on to the end through a storyboard too.
            var options = StoryboardOptions()
            options.interval = 0.5
            _ = try Storyboard.make(MediaInput(source: try Self.source("testsrc2-480x270-4s.mp4", failingAt: 0.6)), options: options)
        }
        Self.expectSourceChanged("video probe") {
            _ = try MediaInput(source: try Self.source("testsrc2-480x270-4s.mp4", failingAt: 0.01)).probe()
        }
    }
}
