import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// What the converter leaves out of the H.264 stream: x264's option-string SEI (`X264InfoSEI`), checked
/// against ffmpeg's own `filter_units` bitstream filter and ffmpeg's decoder.
@Suite(.offPool) struct ConversionBitstreamTests {
    static let ffmpegReady = Run.which("ffmpeg") != nil

    /// On a raw stream that ffmpeg's libx264 writes, removing `X264InfoSEI.range` gives exactly the bytes of
    /// `ffmpeg -bsf:v filter_units=remove_types=6` (every SEI; x264 writes only its own here).
    @Test(.enabled(if: ffmpegReady, "needs ffmpeg")) func removesTheSameBytesAsFFmpegsFilterUnits() throws {
        let dir = try TemporaryDirectory()
        let raw = dir.path("a.h264"), filtered = dir.path("b.h264")
        let made = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10",
                                                        "-frames:v", "6", "-c:v", "libx264", "-tune", "animation", "-f", "h264", raw])
        try #require(made.status == 0, "\(made.stderr)")
        let filter = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", raw, "-c", "copy",
                                                          "-bsf:v", "filter_units=remove_types=6", "-f", "h264", filtered])
        try #require(filter.status == 0, "\(filter.stderr)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: filtered)))
        let cut = try #require(bytes.withUnsafeBufferPointer { X264InfoSEI.range(in: $0) })
        #expect(cut.count > 100 && expected.count < bytes.count)
        bytes.removeSubrange(cut)
        #expect(bytes == expected)
        // A stream without it has nothing to remove.
        #expect(expected.withUnsafeBufferPointer { X264InfoSEI.range(in: $0) } == nil)
    }

    /// A converted GIF holds no x264 SEI, and ffmpeg decodes every frame of it without an error.
    @Test(.enabled(if: ffmpegReady, "needs ffmpeg")) func convertedVideoHasNoX264SEIAndDecodes() throws {
        var gif = TestGIF(width: 40, height: 30)
        for i in 0..<6 {
            var pixels = [UInt8](repeating: 0, count: 1200)
            for p in 0..<1200 { pixels[p] = UInt8((p / 40 + p % 40 + i * 3) % 4) }
            gif.frames.append(TestGIF.Frame(width: 40, height: 30, pixels: pixels, delay: 10))
        }
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()))
        let text = String(decoding: result.data, as: UTF8.self)
        #expect(!text.contains("x264 - core") && !text.contains("options:"))
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("a.mp4")))
        let decoded = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-i", dir.path("a.mp4"), "-f", "framemd5", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(decoded.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == result.encodedFrames)
        #expect(result.encodedFrames == 6)
    }
}
