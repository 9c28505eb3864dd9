import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The 8-bit RGB/RGBA PNG path that inflates with ISA-L and undoes the row filters itself (not libpng):
/// every filter type, both layouts, IDAT split over many chunks, against Pillow's decode of the same file.
@Suite(.serialized, .offPool) struct PNGFastPathTests {
    /// ffmpeg's PNG encoder writes every row with one chosen filter (`-pred`) and splits IDAT into chunks.
    @Test(arguments: ["none", "sub", "up", "avg", "paeth", "mixed"], ["rgb24", "rgba"])
    func everyFilterDecodesExactly(pred: String, pixelFormat: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("f.png")
        // Alpha from 0 to 255 across the picture (geq), so premultiplied sums and alpha 0 are both exercised.
        let filter = pixelFormat == "rgba" ? "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'" : "format=rgb24"
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=size=301x203", "-frames:v", "1", "-vf", filter, "-pred", pred, path])
        let decoded = try PNGStreamDecoder.decode(try FileByteSource(path: path), scale: 1, limits: Limits())
        let reference = try #require(try Pillow.decode(path))
        let channels = pixelFormat == "rgba" ? 4 : 3
        #expect(decoded.factor == 1 && decoded.image.channels == channels)
        #expect(decoded.image.width == reference.width && decoded.image.height == reference.height)
        var mismatches = 0
        for i in 0..<(reference.width * reference.height) {
            let alpha = channels == 4 ? decoded.image.pixels[i * 4 + 3] : 255
            if alpha != reference.pixels[i * 4 + 3] { mismatches += 1; continue }
            // Colour under alpha 0 carries no information (and the box filter's premultiplied sums drop it).
            if alpha == 0 { continue }
            for c in 0..<3 where decoded.image.pixels[i * channels + c] != reference.pixels[i * 4 + c] { mismatches += 1 }
        }
        #expect(mismatches == 0, "\(pred) \(pixelFormat): \(mismatches) samples differ from Pillow")
    }

    /// A flipped byte inside the image data fails the chunk's CRC, as libpng fails it; a file cut inside
    /// the image data is reported as truncated.
    @Test func damagedImageDataIsATypedError() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ok.png")
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=size=640x480", "-frames:v", "1", "-pix_fmt", "rgb24", path])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var flipped = bytes
        flipped[bytes.count / 2] ^= 0x40
        #expect(throws: FlipbookError.self) {
            _ = try PNGStreamDecoder.decode(MemoryByteSource(flipped), scale: 0.25, limits: Limits())
        }
        let cut = Array(bytes.prefix(bytes.count / 2))
        do {
            _ = try PNGStreamDecoder.decode(MemoryByteSource(cut), scale: 0.25, limits: Limits())
            Issue.record("a PNG cut in half decoded")
        } catch let error as FlipbookError {
            #expect(error.code == .truncated)
        }
    }
}
