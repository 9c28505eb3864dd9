import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// AVIF (avifenc: libavif + aom) and HEIC (heif-enc: libheif + x265) stills made here from a picture of our
/// own; the references are that source picture through Pillow (rotated by Pillow where the file says so),
/// and avifdec's (libavif + dav1d) decode, both independent of libheif.
@Suite(.offPool) struct HEIFTests {
    static let tools = Run.which("avifenc") != nil && Run.which("heif-enc") != nil && Run.which("avifdec") != nil
    static let skip: Comment = "needs avifenc, avifdec (libavif-bin) and heif-enc (libheif-examples)"

    static func source(_ dir: TemporaryDirectory, rgba: Bool = false, width: Int = 640, height: Int = 480) throws -> String {
        let path = dir.path(rgba ? "src-rgba.png" : "src.png")
        try StillOracle.make(["photo", path, String(width), String(height)] + (rgba ? ["rgba"] : []))
        return path
    }

    static func avifenc(_ args: [String]) throws {
        let run = try Run.program("/usr/bin/avifenc", ["-s", "10", "--min", "10", "--max", "20"] + args)
        try #require(run.status == 0, "avifenc: \(run.stderr)")
    }

    /// irot is applied by libheif (90° anticlockwise per step): the probe reports the displayed size and the
    /// pixels match Pillow's rotation of the source.
    @Test(.enabled(if: tools, skip), arguments: [(1, "ROTATE_90"), (2, "ROTATE_180"), (3, "ROTATE_270")])
    func avifRotationIsApplied(steps: Int, op: String) throws {
        let dir = try TemporaryDirectory()
        let src = try Self.source(dir)
        try Self.avifenc(["--irot", String(steps), src, dir.path("r.avif")])
        let input = try MediaInput(path: dir.path("r.avif"))
        let info = try input.probe()
        #expect(info.type == .avif)
        #expect(steps % 2 == 1 ? (info.width == 480 && info.height == 640) : (info.width == 640 && info.height == 480))
        let ours = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 200))
        let reference = try StillOracle.transposed(src, op: op, size: Size(width: ours.width, height: ours.height))
        let ssim = try Compare.ssim(ours, reference)
        #expect(ssim >= 0.95, "irot \(steps): SSIM \(ssim)")
    }

    /// A 2x2 grid AVIF comes out whole (libheif assembles the tiles) and matches avifdec's decode.
    @Test(.enabled(if: tools, skip))
    func avifGridIsAssembled() throws {
        let dir = try TemporaryDirectory()
        let src = try Self.source(dir)
        try Self.avifenc(["--grid", "2x2", src, dir.path("g.avif")])
        let run = try Run.program("/usr/bin/avifdec", [dir.path("g.avif"), dir.path("g.png")])
        try #require(run.status == 0, "avifdec: \(run.stderr)")
        let ours = try MediaInput(path: dir.path("g.avif")).thumbnailImage(ThumbnailRequest(maxPixelSize: 640))
        #expect(ours.width == 640 && ours.height == 480)
        let reference = try #require(try Pillow.decode(dir.path("g.png")))
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 3)
    }

    /// Alpha survives (PNG output keeps it; the transparent corners stay transparent) and matches the source.
    @Test(.enabled(if: tools, skip))
    func avifAlphaIsKept() throws {
        let dir = try TemporaryDirectory()
        let src = try Self.source(dir, rgba: true)
        try Self.avifenc([src, dir.path("a.avif")])
        let ours = try MediaInput(path: dir.path("a.avif")).thumbnailImage(ThumbnailRequest(maxPixelSize: 320, format: .png))
        #expect(ours.channels == 4)
        #expect(ours.pixels[3] < 16, "top-left corner should be transparent")
        let reference = try #require(try Pillow.decode(src, size: Size(width: ours.width, height: ours.height)))
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 4)
    }

    /// HEIC with a 320x240 thumbnail item (as phones write): a 256 px thumbnail comes from the item, a 512 px
    /// one from the primary image; both match the source picture. (The source is a 400x300 picture enlarged:
    /// heif-enc makes its item by point sampling, which would alias our test picture's fine texture.)
    @Test(.enabled(if: tools, skip))
    func heicThumbnailItemIsUsedWhenLargeEnough() throws {
        let dir = try TemporaryDirectory()
        let small = try Self.source(dir, width: 400, height: 300)
        let src = dir.path("big.png")
        try FFmpeg.run(["-i", small, "-vf", "scale=1600:1200:flags=bicubic", src])
        let run = try Run.program("/usr/bin/heif-enc", ["-q", "80", "-t", "320", src, "-o", dir.path("t.heic")])
        try #require(run.status == 0, "heif-enc: \(run.stderr)")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path("t.heic"))))
        for (size, expectItem) in [(256, true), (512, false)] {
            let decoded = try bytes.withUnsafeBytes {
                try HEIFDecoder.thumbnail($0, ThumbnailRequest(maxPixelSize: size), limits: Limits())
            }
            #expect(decoded.usedThumbnailItem == expectItem, "\(size) px")
            let ours = decoded.image
            #expect(ours.width == size && ours.height == size * 3 / 4)
            let reference = try #require(try Pillow.decode(src, size: Size(width: ours.width, height: ours.height)))
            let ssim = try Compare.ssim(ours, reference)
            print("HEIC \(size) px (thumbnail item: \(expectItem)): SSIM \(ssim)")
            // The item is heif-enc's own point-sampled, re-encoded 320 px copy: a looser bound for it (a wrong
            // crop or a black decode scores near 0).
            #expect(ssim >= (expectItem ? 0.85 : 0.97), "\(size) px: SSIM \(ssim)")
        }
        let info = try MediaInput(path: dir.path("t.heic")).probe()
        #expect(info.type == .heic && info.width == 1600 && info.height == 1200 && info.codec == "hevc")
    }

    /// HEIF cannot be decoded scaled: the pixel limit applies to the whole image and says so.
    @Test(.enabled(if: tools, skip))
    func pixelLimitNamesTheWholeDecode() throws {
        let dir = try TemporaryDirectory()
        let src = try Self.source(dir)
        try Self.avifenc([src, dir.path("l.avif")])
        let input = try MediaInput(path: dir.path("l.avif"), limits: Limits(maxPixels: 100_000))
        do {
            _ = try input.thumbnail()
            Issue.record("expected a limit error")
        } catch let error as FlipbookError {
            #expect(error.code == .limitExceeded && error.message.contains("not scaled"), "\(error)")
        }
    }
}
