import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Large stills decoded without their full size in memory: the decode path and what it allocates are
/// checked (not timing). Inputs are made by ffmpeg; references are ffmpeg's full decode scaled by Lanczos.
@Suite(.offPool) struct HugeStillTests {
    /// A 16000x9000 WebP (144 MP: 576 MB as RGBA, over the default 100 MP limit) thumbnails through
    /// libwebp's scaled decode: only the target-sized image is allocated, so a pixel limit far below the
    /// source's size still lets it through.
    @Test func hugeWebPIsDecodedScaledToTheTarget() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("huge.webp")
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=size=16000x9000", "-frames:v", "1", "-c:v", "libwebp",
                        "-quality", "50", "-compression_level", "0", path])
        let input = try MediaInput(path: path, limits: Limits(maxPixels: 1_000_000))
        let image = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 256))
        #expect(image.width == 256 && image.height == 144)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let decoded = try bytes.withUnsafeBytes { try WebPScaledDecoder.decode($0, scale: 256.0 / 16000, limits: Limits(maxPixels: 1_000_000)) }
        #expect(decoded.scaled && decoded.fullSize == Size(width: 16000, height: 9000))
        #expect(decoded.image.pixels.count == 256 * 144 * 3, "only the scaled image is allocated")
        // A full-size decode of the same file would need the source's pixels and is refused by that limit.
        #expect(throws: FlipbookError.self) {
            try bytes.withUnsafeBytes { try WebPScaledDecoder.decode($0, scale: 1, limits: Limits(maxPixels: 1_000_000)) }
        }
    }

    /// A 24 MP PNG is streamed row by row and box-shrunk while decoding: the decoder's image is a factor
    /// of the source (never the source), the pixel limit does not apply to the streamed source, and the
    /// thumbnail matches ffmpeg's full decode scaled by Lanczos.
    @Test func largePNGIsStreamedAndShrunkWhileDecoding() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("big.png")
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=size=6000x4000", "-frames:v", "1", "-compression_level", "1", path])
        let source = try FileByteSource(path: path)
        let decoded = try PNGStreamDecoder.decode(source, scale: 256.0 / 6000, limits: Limits(maxPixels: 2_000_000))
        #expect(decoded.factor == 11 && !decoded.interlaced)
        #expect(decoded.image.width == 546 && decoded.image.height == 364)
        let ours = try MediaInput(path: path, limits: Limits(maxPixels: 2_000_000)).thumbnailImage(ThumbnailRequest(maxPixelSize: 256))
        let reference = dir.path("ref.png")
        try FFmpeg.run(["-i", path, "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos,format=rgb24", reference])
        let ssim = try Compare.ssim(ours, try #require(try Pillow.decode(reference)))
        print("24 MP PNG streamed: SSIM \(ssim)")
        #expect(ssim >= 0.97)
    }

    /// Adam7 needs every pass before a row is final: decoded whole, under the pixel limit, whose error says
    /// why; within the limit it matches the non-interlaced decode.
    @Test func adam7PNGIsDecodedWholeUnderTheLimit() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=size=1200x800", "-frames:v", "1", dir.path("plain.png")])
        try FFmpeg.run(["-i", dir.path("plain.png"), "-flags", "+ildct", dir.path("adam7.png")])
        do {
            _ = try MediaInput(path: dir.path("adam7.png"), limits: Limits(maxPixels: 500_000)).thumbnail()
            Issue.record("expected a limit error")
        } catch let error as FlipbookError {
            #expect(error.code == .limitExceeded && error.message.contains("interlaced"), "\(error)")
        }
        let interlaced = try MediaInput(path: dir.path("adam7.png")).thumbnailImage(ThumbnailRequest(maxPixelSize: 300))
        let plain = try MediaInput(path: dir.path("plain.png")).thumbnailImage(ThumbnailRequest(maxPixelSize: 300))
        #expect(interlaced.width == 300 && interlaced.height == 200)
        let reference = try #require(try Pillow.decode(dir.path("plain.png"), size: Size(width: 300, height: 200)))
        #expect(Compare.meanAbsoluteDifference(interlaced, reference) < 3)
        #expect(Compare.meanAbsoluteDifference(plain, reference) < 3)
    }
}
