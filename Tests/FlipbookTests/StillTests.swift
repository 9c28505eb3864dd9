import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

@Suite(.offPool) struct StillTests {
    static func stillEntries() -> [Corpus.Entry] {
        Corpus.entries.filter { ["jpeg", "png", "webp"].contains($0.folder) }
    }

    /// Every JPEG, PNG and WebP in the corpus thumbnails or fails with a FlipbookError (a crash would take
    /// the test process down). Files the MANIFEST describes as sound must succeed.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyCorpusStillThumbnailsOrFailsWithATypedError() throws {
        let damaged = ["TRUNCATED", "CORRUPT", "corrupt", "no SOS", "no SOF", "decompression bomb", "dimensions",
                       "ANIMATED", "height 0", "shortened", "65535x65535"]
        var failures: [String] = []
        for entry in Self.stillEntries() {
            for request in [ThumbnailRequest(maxPixelSize: 128), ThumbnailRequest(maxPixelSize: 64, fit: .cover, format: .png)] {
                do {
                    let input = try MediaInput(path: entry.url.path)
                    let thumb = try input.thumbnail(request)
                    #expect(thumb.width > 0 && thumb.height > 0 && thumb.width <= 128 && thumb.height <= 128, "\(entry.path)")
                    if request.fit == .cover { #expect(thumb.width == thumb.height, "\(entry.path)") }
                } catch let error as FlipbookError {
                    #expect(!error.message.isEmpty)
                    failures.append("\(entry.path): \(error.code) \(error)")
                    let expected = damaged.contains { entry.note.contains($0) }
                    #expect(expected, "\(entry.path) should thumbnail but failed: \(error)")
                }
            }
        }
        print("typed failures:\n" + failures.joined(separator: "\n"))
    }

    /// The exif-orientation-examples show the same scene stored 8 ways: each must come out upright, and so
    /// identical to Pillow's exif_transpose of the same file, at the displayed size.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage),
          arguments: (0...8).map { "Landscape_\($0).jpg" } + (1...4).map { "Portrait_\($0).jpg" })
    func exifOrientationComesOutUpright(name: String) throws {
        let path = Corpus.file("jpeg/exif-orientation-examples/\(name)")
        let image = try MediaInput(path: path).thumbnailImage(ThumbnailRequest(maxPixelSize: 300))
        if name.hasPrefix("Landscape") {
            #expect(image.width == 300 && image.height == 200)
        } else {
            #expect(image.width == 200 && image.height == 300)
        }
        let reference = try #require(try Pillow.decode(path, size: Size(width: image.width, height: image.height)))
        #expect(Compare.meanAbsoluteDifference(image, reference) < 4, "\(name)")
        // And every Landscape_N equals Landscape_1 once upright (the files' own promise).
        if name.hasPrefix("Landscape"), name != "Landscape_1.jpg" {
            let upright = try MediaInput(path: Corpus.file("jpeg/exif-orientation-examples/Landscape_1.jpg"))
                .thumbnailImage(ThumbnailRequest(maxPixelSize: 300))
            #expect(Compare.meanAbsoluteDifference(image, upright) < 6, "\(name) vs Landscape_1")
        }
    }

    /// Full-size decodes (no resampling) agree with Pillow's: colour spaces (RGB, grey), progressive, restart
    /// markers, subsamplings, arithmetic coding, PNG and WebP incl. alpha. (CMYK and YCCK are colour-managed
    /// now, which Pillow does not do without a profile: ColourTests compares them with vipsthumbnail.)
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        "jpeg/jpeg-decoder/rgb.jpg", "jpeg/jpeg-decoder/grayscale_long.jpg", "jpeg/jpeg-decoder/progressive3.jpg",
        "jpeg/jpeg-decoder/restarts.jpg", "jpeg/jpeg-decoder/mjpeg.jpg", "jpeg/jpeg-decoder/multiple-0xff-before-eoi.jpg",
        "jpeg/jpeg-decoder/jpg-size-17x17.jpg", "jpeg/libjpeg-turbo/testimgari.jpg", "jpeg/libjpeg-turbo/testorig.jpg",
        "jpeg/nuke/tricky_progressive.jpeg", "jpeg/pillow/junk_jpeg_header.jpg", "jpeg/pillow/orientation_rectangle.jpg",
        "png/image-png/basi6a16.png", "png/image-png/basn2c16.png", "png/image-png/basn3p08.png", "png/image-png/tbbn3p08.png",
        "png/image-png/s39i3p04.png", "webp/image-webp/3_webp_a.webp", "webp/image-webp/tiny.webp",
        "webp/pillow/hopper_orientation_6.webp",
    ])
    func fullSizeDecodeMatchesPillow(relative: String) throws {
        let path = Corpus.file(relative)
        let info = try MediaInput(path: path).probe()
        let side = max(info.width ?? 1, info.height ?? 1)
        let ours = try MediaInput(path: path).thumbnailImage(ThumbnailRequest(maxPixelSize: side))
        let reference = try #require(try Pillow.decode(path))
        #expect(ours.width == reference.width && ours.height == reference.height, "\(relative)")
        guard ours.width == reference.width, ours.height == reference.height else { return }
        // Pillow and libav upsample chroma slightly differently; a wrong colour space or orientation is off by tens.
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 3, "\(relative)")
    }

    /// Thumbnails of photos against a full-size decode downscaled by ffmpeg's Lanczos (an independent
    /// decoder and scaler): SSIM at least 0.97.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        ("jpeg/sharp/2569067123_aca715a2ee_o.jpg", 256), ("jpeg/sdwebimage/TestImageLarge.jpg", 256),
        ("jpeg/exif-orientation-examples/Landscape_1.jpg", 320), ("jpeg/jpeg-decoder/extraneous-bytes-after-sos.jpg", 300),
        ("jpeg/libjpeg-turbo/testorig.jpg", 100), ("webp/image-webp/3.webp", 256), ("jpeg/pillow/frozenpond.mpo", 200),
    ])
    func photoThumbnailsMatchAHighQualityReference(relative: String, size: Int) throws {
        let path = Corpus.file(relative)
        let ours = try MediaInput(path: path).thumbnailImage(ThumbnailRequest(maxPixelSize: size))
        let dir = try TemporaryDirectory()
        let refPath = dir.path("ref.png")
        let scale = "scale=\(ours.width):\(ours.height):flags=lanczos+accurate_rnd+full_chroma_int+full_chroma_inp,format=rgb24"
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1", "-vf", scale, "-y", refPath])
        #expect(run.status == 0, "\(run.stderr)")
        let reference = try #require(try Pillow.decode(refPath))
        let ssim = try Compare.ssim(ours, reference)
        print("SSIM \(relative) at \(ours.width)x\(ours.height): \(ssim)")
        #expect(ssim >= 0.97, "\(relative): SSIM \(ssim)")
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func decompressionBombIsRefusedFromTheHeader() throws {
        let input = try MediaInput(path: Corpus.file("jpeg/jpeg-decoder/max_size.jpg"))
        #expect(throws: FlipbookError.self) { try input.thumbnail() }
        do { _ = try input.thumbnail() } catch let error as FlipbookError { #expect(error.code == .limitExceeded) }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        "jpeg/sharp/2569067123_aca715a2ee_o.jpg", "png/image-png/basn2c16.png", "webp/image-webp/3.webp",
    ])
    func pixelLimitAppliesToEveryFormat(relative: String) throws {
        let input = try MediaInput(path: Corpus.file(relative), limits: Limits(maxPixels: 500))
        do {
            _ = try input.thumbnail()
            Issue.record("expected a limit error")
        } catch let error as FlipbookError {
            #expect(error.code == .limitExceeded, "\(error)")
        }
    }

    @Test func inputByteLimitIsCheckedBeforeReading() throws {
        #expect(throws: FlipbookError.self) { try MediaInput(bytes: [UInt8](repeating: 0, count: 100), limits: Limits(maxInputBytes: 99)) }
    }

    @Test func garbageIsAnUnknownFormatError() throws {
        let input = try MediaInput(bytes: Array("definitely not an image".utf8))
        do {
            _ = try input.thumbnail()
            Issue.record("expected an error")
        } catch let error as FlipbookError {
            #expect(error.code == .unknownFormat)
        }
    }

    /// Alpha survives into PNG and WebP; JPEG output is flattened onto white.
    @Test func alphaIsKeptOrFlattenedByOutputFormat() throws {
        // Left half transparent, right half opaque red, made in memory and encoded by our PNG encoder.
        var pixels = [UInt8]()
        for _ in 0..<64 { for x in 0..<64 { pixels += x < 32 ? [0, 0, 255, 0] : [255, 0, 0, 255] } }
        let png = try EncodedImage(image: Image(width: 64, height: 64, channels: 4, pixels: pixels), format: .png, quality: 100)
        let input = try MediaInput(bytes: png.data)
        #expect(input.type == .png)
        #expect(try input.probe().hasAlpha == true)
        let dir = try TemporaryDirectory()
        for format in OutputFormat.allCases {
            let out = try input.thumbnail(maxPixelSize: 32, format: format)
            let path = dir.path("t.\(format.fileExtension)")
            try Data(out.data).write(to: URL(fileURLWithPath: path))
            let decoded = try #require(try Pillow.decode(path))
            #expect(decoded.width == 32 && decoded.height == 32)
            let left = Array(decoded.pixels[(8 * 32 + 2) * 4..<(8 * 32 + 2) * 4 + 4])
            let right = Array(decoded.pixels[(8 * 32 + 29) * 4..<(8 * 32 + 29) * 4 + 4])
            if format == .jpeg {
                #expect(left.prefix(3).allSatisfy { $0 > 245 }, "transparent becomes white in JPEG: \(left)")
            } else {
                #expect(left[3] < 10, "\(format) keeps transparency: \(left)")
            }
            #expect(right[0] > 230 && right[1] < 30 && right[2] < 30 && right[3] > 245, "\(format): \(right)")
        }
    }

    /// An EXIF thumbnail is used only when it is at least the requested size; a larger request decodes
    /// the main image. Proved with a file whose embedded thumbnail is a different picture.
    @Test func embeddedThumbnailOnlyWhenLargeEnough() throws {
        let main = try TurboJPEG.encode(Image(width: 400, height: 300, channels: 3,
                                              pixels: [UInt8](repeating: 0, count: 400 * 300 * 3)), quality: 90)  // black
        let thumb = try TurboJPEG.encode(Image(width: 160, height: 120, channels: 3,
                                               pixels: [UInt8](repeating: 255, count: 160 * 120 * 3)), quality: 90) // white
        // TIFF (big-endian): IFD0 with no entries -> IFD1 with JPEGInterchangeFormat / Length.
        var tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8]
        tiff += [0, 0, 0, 0, 0, 14]                 // IFD0: 0 entries, next IFD at 14
        tiff += [0, 2]                              // IFD1: 2 entries
        let dataOffset = 14 + 2 + 24 + 4
        tiff += [0x02, 0x01, 0, 4, 0, 0, 0, 1] + be32(dataOffset)
        tiff += [0x02, 0x02, 0, 4, 0, 0, 0, 1] + be32(thumb.count)
        tiff += [0, 0, 0, 0]
        tiff += thumb
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let app1: [UInt8] = [0xFF, 0xE1] + [UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let file = Array(main.prefix(2)) + app1 + Array(main.dropFirst(2))
        let input = try MediaInput(bytes: file)
        let small = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 100))
        let large = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 200))
        #expect(small.width == 100 && small.height == 75 && large.width == 200)
        #expect(small.pixels[0] > 200, "a 160 px embedded thumbnail serves a 100 px request")
        #expect(large.pixels[0] < 50, "a 200 px request must not upscale the 160 px embedded thumbnail")
    }

    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// Scaled JPEG decodes round sizes up; the partial last block must not leave a dark edge.
    @Test func noDarkEdgeAfterScaledDecode() throws {
        // 1001 x 1001 white: at 1/8 TurboJPEG gives 126 px whose last column covers 1 source pixel.
        let white = try TurboJPEG.encode(Image(width: 1001, height: 1001, channels: 3,
                                               pixels: [UInt8](repeating: 255, count: 1001 * 1001 * 3)), quality: 95)
        let image = try MediaInput(bytes: white).thumbnailImage(ThumbnailRequest(maxPixelSize: 50))
        #expect(image.width == 50)
        let lastColumn = (0..<image.height).map { image.pixels[($0 * image.width + image.width - 1) * 3] }
        let lastRow = (0..<image.width).map { image.pixels[((image.height - 1) * image.width + $0) * 3] }
        #expect(lastColumn.allSatisfy { $0 > 245 } && lastRow.allSatisfy { $0 > 245 }, "\(lastColumn.min()!) \(lastRow.min()!)")
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func probeReportsDisplayedSizeAndOrientation() throws {
        let info = try MediaInput(path: Corpus.file("jpeg/exif-orientation-examples/Landscape_6.jpg")).probe()
        #expect(info.type == .jpeg && info.orientation == 6 && info.width == 1800 && info.height == 1200)
        let apng = try MediaInput(path: Corpus.file("png/image-png/basic_f20.png")).probe()
        #expect(apng.type == .apng && apng.frames == 20 && apng.loopCount == 0 && apng.hasAlpha == true)
        let webp = try MediaInput(path: Corpus.file("webp/sharp/animated-loop-3.webp")).probe()
        #expect(webp.frames == 10 && webp.loopCount == 3 && webp.width == 370 && webp.height == 285)
        let hopper = try MediaInput(path: Corpus.file("webp/pillow/hopper_orientation_6.webp")).probe()
        #expect(hopper.orientation == 6)
        let movie = try MediaInput(path: Corpus.file("video/jsonize-ffmpeg-task/iphone_rotated.mov")).probe()
        #expect(movie.width == 320 && movie.height == 568 && movie.orientation == 6 && movie.codec == "h264")
    }
}
