import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// AVIF/HEIC colour and layout against references independent of our code: vipsthumbnail (libvips over
/// libheif; its plain output, see `StillOracle.vips`) for grids and for each chroma layout, bit depth, range
/// and matrix (we shrink libheif's planar RGB or monochrome planes ourselves, and read monochrome range
/// ourselves); Pillow on the source picture; and a numpy implementation of the PQ/HLG standards plus the
/// BT.2408 mapping (Tests/oracle/hdr_reference.py) for HDR stills.
@Suite(.offPool) struct HEIFColourTests {
    static let tools = HEIFTests.tools && Run.which("vipsthumbnail") != nil
    static let skip: Comment = "needs avifenc, avifdec (libavif-bin), heif-enc and vipsthumbnail (libvips-tools)"

    /// A 2x2 grid made by avifenc (four 640x480 tiles, assembled by libheif): the probe gives the whole
    /// canvas, the thumbnail has the whole picture's shape and matches vipsthumbnail's.
    @Test(.enabled(if: tools, skip))
    func avifGridMatchesVipsthumbnail() throws {
        let dir = try TemporaryDirectory()
        let src = try HEIFTests.source(dir, width: 1280, height: 960)
        try HEIFTests.avifenc(["--grid", "2x2", src, dir.path("grid.avif")])
        let input = try MediaInput(path: dir.path("grid.avif"))
        let info = try input.probe()
        #expect(info.type == .avif && info.width == 1280 && info.height == 960)
        let ours = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 256))
        #expect(ours.width == 256 && ours.height == 192)
        let reference = try StillOracle.vips(dir.path("grid.avif"), size: Size(width: ours.width, height: ours.height), exportProfile: false)
        let ssim = try Compare.ssim(ours, reference)
        print("AVIF 2x2 grid: SSIM vs vipsthumbnail \(ssim)")
        #expect(ssim >= 0.97, "grid: SSIM \(ssim)")
    }

    /// A HEIC whose primary item is a 3x2 grid of x265 tiles, as Apple's cameras write (assembled by
    /// scripts/make_still_inputs.py from heif-enc tiles: nothing installed writes HEIF grids): whole canvas in
    /// the probe, the whole picture in the thumbnail, SSIM >= 0.97 against vipsthumbnail and against the
    /// source picture through Pillow (which never sees the HEIF).
    @Test(.enabled(if: tools, skip))
    func heicGridMatchesVipsthumbnailAndSource() throws {
        let dir = try TemporaryDirectory()
        let src = try HEIFTests.source(dir, width: 1152, height: 768)
        try StillOracle.make(["heic-grid", src, "3", "2", dir.path("grid.heic")])
        let input = try MediaInput(path: dir.path("grid.heic"))
        let info = try input.probe()
        #expect(info.type == .heic && info.width == 1152 && info.height == 768)
        let ours = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 300))
        #expect(ours.width == 300 && ours.height == 200)
        let size = Size(width: ours.width, height: ours.height)
        let vips = try Compare.ssim(ours, try StillOracle.vips(dir.path("grid.heic"), size: size, exportProfile: false))
        let source = try Compare.ssim(ours, try #require(try Pillow.decode(src, size: size)))
        print("HEIC 3x2 grid: SSIM \(vips) vs vipsthumbnail, \(source) vs the source")
        #expect(vips >= 0.97 && source >= 0.97, "HEIC grid: SSIM \(vips) vs vips, \(source) vs source")
    }

    /// Chroma layouts, bit depths, ranges and matrices avifenc writes: 4:2:0 (BT.601 full range, avifenc's
    /// default), 4:4:4 10-bit, 4:2:2 12-bit limited range, BT.709 limited range, identity matrix (GBR),
    /// monochrome. SSIM >= 0.97 and a mean difference under 2 levels against vipsthumbnail: a wrong matrix,
    /// range or chroma position shifts every pixel by more than that.
    @Test(.enabled(if: tools, skip), arguments: [
        ["-y", "420"], ["-y", "444", "-d", "10"], ["-y", "422", "-d", "12", "-r", "limited"],
        ["-y", "420", "--cicp", "1/13/1", "-r", "limited"], ["-y", "444", "--cicp", "1/13/0"], ["-y", "400"],
    ])
    func avifLayoutsMatchVipsthumbnail(options: [String]) throws {
        let dir = try TemporaryDirectory()
        let src = try HEIFTests.source(dir, width: 1203, height: 901)  // odd sizes: partial chroma samples at the edges
        try HEIFTests.avifenc(options + [src, dir.path("l.avif")])
        let ours = try MediaInput(path: dir.path("l.avif")).thumbnailImage(ThumbnailRequest(maxPixelSize: 200))
        let reference = try StillOracle.vips(dir.path("l.avif"), size: Size(width: ours.width, height: ours.height), exportProfile: false)
        let ssim = try Compare.ssim(ours, reference), mad = Compare.meanAbsoluteDifference(ours, reference)
        print("AVIF \(options.joined(separator: " ")): SSIM \(ssim), mean difference \(mad) vs vipsthumbnail")
        #expect(ssim >= 0.97 && mad < 2, "\(options): SSIM \(ssim), mean difference \(mad)")
    }

    /// PQ (--cicp 9/16/9) and HLG (9/18/9) 10-bit AVIFs from a 16-bit BT.2020 source whose SDR white sits at
    /// 203 cd/m² and whose right third reaches 609 cd/m²: tone-mapped to sRGB like video. The reference maps
    /// the 16-bit source (before AV1 coding, near-lossless here so coding noise does not hide mapping errors)
    /// with numpy from the standards. Thresholds: SSIM >= 0.97 as for the other colour references, and a mean
    /// difference under 1.5 levels: measured 0.5 (PQ) and 0.3 (HLG), from AV1 coding and from shrinking
    /// before rather than after the transfer curves; clipping instead of rolling off gives 8.4 on this
    /// picture, a reference white of 100 or 300 cd/m² instead of 203 gives 12 to 15 (numpy on the same
    /// source). The untouched signal (45 and 28 levels away) must be at least 5 times further, so the test can tell.
    @Test(.enabled(if: tools, skip), arguments: [("pq", "9/16/9"), ("hlg", "9/18/9")])
    func hdrAVIFIsToneMappedLikeVideo(transfer: String, cicp: String) throws {
        let dir = try TemporaryDirectory()
        let photo = try HEIFTests.source(dir)
        let src = dir.path("\(transfer).png")
        try StillOracle.make(["hdr", photo, transfer, src])
        try HEIFTests.avifenc(["-d", "10", "-y", "444", "--min", "0", "--max", "2", "--cicp", cicp, src, dir.path("hdr.avif")])
        let ours = try MediaInput(path: dir.path("hdr.avif")).thumbnailImage(ThumbnailRequest(maxPixelSize: 320))
        #expect(ours.width == 320 && ours.height == 240)
        let size = Size(width: ours.width, height: ours.height)
        let reference = try StillOracle.hdr(transfer, src, size: size)
        let naive = try StillOracle.hdr("naive", src, size: size)
        let ssim = try Compare.ssim(ours, reference)
        let mad = Compare.meanAbsoluteDifference(ours, reference), naiveMad = Compare.meanAbsoluteDifference(naive, reference)
        print("\(transfer) AVIF: SSIM \(ssim), mean difference \(mad); untouched signal \(naiveMad)")
        #expect(ssim >= 0.97 && mad < 1.5, "\(transfer): SSIM \(ssim), mean difference \(mad)")
        #expect(naiveMad > 5 * mad, "\(transfer): the untouched signal is only \(naiveMad) away")
    }
}
