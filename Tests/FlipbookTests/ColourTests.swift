import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook
import CLCMS2

/// Colour management against independent references: vipsthumbnail (libvips + Little CMS) at the same size,
/// and Pillow's ImageCms where Debian's libvips 8.14 cannot use a profile.
@Suite(.offPool) struct ColourTests {
    static let vipsAvailable = Run.which("vipsthumbnail") != nil

    /// The corpus's CMYK, YCCK (no profile: the default CMYK profile, libvips's) and XYB (its own profile)
    /// JPEGs: SSIM >= 0.97 against vipsthumbnail. For the XYB file vips is asked for the perceptual intent:
    /// the profile has no relative-colorimetric table and vips 8.14 then skips the transform altogether
    /// (Little CMS, which we and Pillow call, falls back to perceptual by itself).
    @Test(.enabled(if: Corpus.available && vipsAvailable, "needs the corpus and vipsthumbnail (libvips-tools)"), arguments: [
        "jpeg/jpeg-decoder/jpg-cmyk-1.jpg", "jpeg/pillow/pil_sample_cmyk.jpg",
        "jpeg/sharp/Channel_digital_image_CMYK_color_no_profile.jpg", "jpeg/jpeg-decoder/1cbb1bb37d62c44f67374cd451643dc4.jpg",
        "jpeg/libvips/sample-xyb.jpg",
    ])
    func corpusCMYKYCCKAndXYBMatchVipsthumbnail(relative: String) throws {
        let path = Corpus.file(relative)
        let ours = try MediaInput(path: path).thumbnailImage(ThumbnailRequest(maxPixelSize: 128))
        let reference = try StillOracle.vips(path, size: Size(width: ours.width, height: ours.height),
                                             intent: relative.contains("xyb") ? "perceptual" : nil)
        let ssim = try Compare.ssim(ours, reference)
        print("SSIM vs vipsthumbnail \(relative): \(ssim)")
        #expect(ssim >= 0.97, "\(relative): SSIM \(ssim)")
    }

    /// Display P3 and Adobe RGB JPEGs made by Little CMS from profiles written from the primaries: SSIM >= 0.97
    /// against vipsthumbnail, while the same pixels without the transform (--keep-profile) score well below,
    /// so the test can tell.
    @Test(.enabled(if: vipsAvailable, "needs vipsthumbnail (libvips-tools)"), arguments: ["display-p3", "adobe-rgb"])
    func wideGamutJPEGsMatchVipsthumbnail(kind: String) throws {
        let dir = try TemporaryDirectory()
        try StillOracle.make(["icc", dir.path("p.icc"), kind])
        try StillOracle.make(["photo", dir.path("photo.png"), "800", "600"])
        try StillOracle.make(["tag", dir.path("photo.png"), dir.path("p.icc"), dir.path("wide.jpg")])
        let input = try MediaInput(path: dir.path("wide.jpg"))
        let ours = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 256))
        let reference = try StillOracle.vips(dir.path("wide.jpg"), size: Size(width: ours.width, height: ours.height))
        let ssim = try Compare.ssim(ours, reference)
        let kept = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 256, keepProfile: true))
        let untransformed = try Compare.ssim(kept, reference)
        print("SSIM vs vipsthumbnail \(kind): \(ssim); without the transform: \(untransformed)")
        #expect(ssim >= 0.97, "\(kind): SSIM \(ssim)")
        #expect(untransformed < 0.95, "\(kind): the profile should matter (untransformed SSIM \(untransformed))")
        #expect(kept.iccProfile == Array(try Data(contentsOf: URL(fileURLWithPath: dir.path("p.icc")))))
    }

    /// A Photoshop YCCK JPEG given Ghostscript's SWOP CMYK profile (187 KB: three APP2 chunks): the chunks are
    /// joined back into the profile, and the thumbnail matches Pillow + Little CMS through that profile (vips
    /// 8.14 calls this profile "incompatible" and falls back to its default, so it cannot be the reference
    /// here) and differs from the default-profile rendering of the same pixels.
    @Test(.enabled(if: Corpus.available && FileManager.default.fileExists(atPath: Self.swop),
                   "needs the corpus and Ghostscript's default_cmyk.icc (libgs-common)"))
    func ycckWithItsOwnMultiChunkProfile() throws {
        let dir = try TemporaryDirectory()
        let original = Corpus.file("jpeg/pillow/pil_sample_cmyk.jpg")
        try StillOracle.make(["embed", original, Self.swop, dir.path("ycck.jpg")])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path("ycck.jpg"))))
        let profile = bytes.withUnsafeBytes { EmbeddedProfile.jpeg($0) }
        #expect(profile == Array(try Data(contentsOf: URL(fileURLWithPath: Self.swop))))

        let ours = try MediaInput(path: dir.path("ycck.jpg")).thumbnailImage(ThumbnailRequest(maxPixelSize: 100))
        let reference = try StillOracle.cms(dir.path("ycck.jpg"), size: Size(width: ours.width, height: ours.height))
        let ssim = try Compare.ssim(ours, reference)
        let withDefault = try MediaInput(path: original).thumbnailImage(ThumbnailRequest(maxPixelSize: 100))
        print("YCCK + SWOP: SSIM vs Pillow/lcms \(ssim); MAD vs default-profile rendering \(Compare.meanAbsoluteDifference(ours, withDefault))")
        #expect(ssim >= 0.97)
        #expect(Compare.meanAbsoluteDifference(ours, withDefault) > 2, "the embedded profile should be the one used")
    }
    static let swop = "/usr/share/color/icc/ghostscript/default_cmyk.icc"

    /// --keep-profile: every output format carries the source's profile, byte for byte, as Pillow reads it.
    @Test func keepProfileEmbedsTheSourceProfileInEveryFormat() throws {
        let dir = try TemporaryDirectory()
        try StillOracle.make(["icc", dir.path("p.icc"), "display-p3"])
        try StillOracle.make(["photo", dir.path("photo.png"), "320", "240"])
        try StillOracle.make(["tag", dir.path("photo.png"), dir.path("p.icc"), dir.path("wide.jpg")])
        let expected = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path("p.icc"))))
        for format in OutputFormat.allCases {
            let out = dir.path("out.\(format.fileExtension)")
            let encoded = try MediaInput(path: dir.path("wide.jpg"))
                .thumbnail(ThumbnailRequest(maxPixelSize: 64, format: format, keepProfile: true))
            try Data(encoded.data).write(to: URL(fileURLWithPath: out))
            #expect(try StillOracle.embeddedProfile(out) == expected, "\(format)")
            let plain = try MediaInput(path: dir.path("wide.jpg")).thumbnail(ThumbnailRequest(maxPixelSize: 64, format: format))
            try Data(plain.data).write(to: URL(fileURLWithPath: out))
            #expect(try StillOracle.embeddedProfile(out) == nil, "\(format): sRGB output is untagged")
        }
    }

    /// The transform cache keys on the profile bytes: the same profile twice is one transform.
    @Test func transformsAreCachedByProfile() throws {
        let bytes = ICCProfile.defaultCMYKBytes
        let a = try ColourTransform.cached(profile: bytes, inputFormat: fb_TYPE_CMYK_8, inputChannels: 4, outputAlpha: false)
        let b = try ColourTransform.cached(profile: bytes, inputFormat: fb_TYPE_CMYK_8, inputChannels: 4, outputAlpha: false)
        #expect(a === b)
        #expect(try ICCProfile(bytes: bytes).name == "Chemical proof")
    }
}
