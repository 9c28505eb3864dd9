import Flipbook
import FlipbookIngest
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

/// A still is decoded once for its whole recipe: every still derivative and the placeholder are cut from one
/// decode sized for the largest (`Ingester.onDecode` counts the decodes). The outputs are checked against
/// vipsthumbnail of the source at each output's size (Tests/ingest/ingest_checks.py), and against what the
/// single-thumbnail path (`flipbook thumb`) makes of each size alone.
@Suite(.offPool) struct SingleDecodeTests {
    static let checks = packageRoot.appendingPathComponent("Tests/ingest/ingest_checks.py").path
    static let stillInputs = packageRoot.appendingPathComponent("scripts/make_still_inputs.py").path

    /// Ingests `path` with `ingester`, returning the result and the decodes reported.
    static func ingest(_ path: String, _ ingester: Ingester) -> (IngestResult, [DecodeEvent]) {
        let events = Mutex<[DecodeEvent]>([])
        var counting = ingester
        counting.onDecode = { event in events.withLock { $0.append(event) } }
        let result = counting.ingest(path: path)
        return (result, events.withLock { $0 })
    }

    /// vipsthumbnail against each (derivative file, fit) of `source`: mean absolute difference per channel at most
    /// `limit`, and SSIM at least 0.97 (the still tests' bar against vipsthumbnail).
    static func expectCloseToVips(_ files: [(path: String, fit: String)], source: String, limit: Double) throws {
        let args = ["vips", String(limit), "0.97"] + files.flatMap { [$0.path, source, $0.fit] }
        let run = try Run.program(Run.python, [checks] + args)
        print(run.stdout)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    /// A 12 MP PNG (4032x3024, a phone photo's size) with the default recipe: one libpng decode (at full size:
    /// the 1280 px `large` needs more than half the source's pixels a side, so no whole-factor shrink fits),
    /// from which `large`, `thumb` and the placeholder are all cut; the ThumbHash carries the source's average
    /// colour. (How the images compare with vipsthumbnail and with each size alone is the next test's, on a
    /// smaller PNG: every further decode of 12 MP costs seconds in a debug build.)
    @Test func aTwelveMegapixelPNGIsDecodedOnceForTheDefaultRecipe() throws {
        let dir = try TemporaryDirectory()
        let png = dir.path("photo.png")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=4032x3024", "-frames:v", "1", "-compression_level", "1", png])
        let (result, decodes) = Self.ingest(png, Ingester(outputRoot: dir.path("out")))
        #expect(result.error == nil, "\(result.error!)")
        #expect(decodes == [DecodeEvent(type: .png, decoder: "libpng", width: 4032, height: 3024)], "\(decodes)")
        #expect(result.derivatives.map { "\($0.name) \($0.width ?? 0)x\($0.height ?? 0)" } == ["thumb 320x240", "large 1280x960"])
        let placeholder = try #require(result.placeholder)
        let hash = try Run.program(Run.python, [Self.checks, "thumbhash", png, placeholder.thumbhash])
        #expect(hash.status == 0, "\(hash.stdout)\(hash.stderr)")
    }

    /// The images the ingester encodes for the default recipe (placeholder, `thumb`, `large`: the same requests),
    /// from one decode of a 2016x1512 PNG, losslessly against vipsthumbnail (its lossy files would measure the
    /// encoders, not the resampling); the largest is pixel for pixel the single path's, the smaller ones within a
    /// level; and the ingester's files are these images encoded.
    @Test func theDefaultRecipesImagesMatchVipsthumbnailAndEachSizeAlone() throws {
        let dir = try TemporaryDirectory()
        let png = dir.path("photo.png")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=2016x1512", "-frames:v", "1", "-compression_level", "1", png])
        let events = Mutex<[DecodeEvent]>([])
        var input = try MediaInput(path: png)
        input.onDecode = { event in events.withLock { $0.append(event) } }
        let requests = [Placeholder.request] + Recipe.standard.still.map {
            ThumbnailRequest(maxPixelSize: $0.size!, fit: $0.fit, quality: $0.quality, format: $0.format)
        }
        let images = try input.thumbnailImages(requests)
        #expect(events.withLock { $0 } == [DecodeEvent(type: .png, decoder: "libpng", width: 2016, height: 1512)])
        #expect(images.map { "\($0.width)x\($0.height)" } == ["100x75", "320x240", "1280x960"])
        var written: [(path: String, fit: String)] = []
        for (i, image) in images.enumerated() {
            let alone = try MediaInput(path: png).thumbnailImage(requests[i])
            let worst = zip(image.pixels, alone.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(i < images.count - 1 ? worst <= 1 : image == alone, "\(requests[i].maxPixelSize) px: \(worst) levels from alone")
            let path = dir.path("image-\(i).png")
            try Data(try EncodedImage(image: image, format: .png, quality: 100).data).write(to: URL(fileURLWithPath: path))
            written.append((path, "inside"))
        }
        try Self.expectCloseToVips(written, source: png, limit: 3)
        let (result, decodes) = Self.ingest(png, Ingester(outputRoot: dir.path("out")))
        #expect(decodes.count == 1 && result.placeholder == Placeholder(image: images[0]), "\(decodes)")
        for (d, image) in zip(Recipe.standard.still, images.dropFirst()) {
            let file = try #require(result.derivatives.first { $0.name == d.name })
            let made = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path("out/\(file.path)"))))
            #expect(made == (try EncodedImage(image: image, format: d.format, quality: d.quality)).data, "\(d.name)")
        }
    }

    /// Colour and orientation are applied once, on each output: a Display P3 PNG (converted to sRGB) and a
    /// JPEG stored on its side (EXIF orientation 6) through a recipe of three sizes, one of them a centre-cropped
    /// square, each decoded once and each output matching vipsthumbnail's colour-managed, upright thumbnail.
    @Test func colourAndOrientationAreAppliedOnceToEveryOutput() throws {
        let dir = try TemporaryDirectory()
        let python = "/usr/bin/python3"
        let made = [try Run.program(python, [Self.stillInputs, "photo", dir.path("plain.png"), "1600", "1200"]),
                    try Run.program(python, [Self.stillInputs, "icc", dir.path("p3.icc"), "display-p3"])]
        for run in made { try #require(run.status == 0, "\(run.stderr)") }
        let tag = try Run.program(python, [Self.stillInputs, "tag", dir.path("plain.png"), dir.path("p3.icc"), dir.path("p3.png")])
        try #require(tag.status == 0, "\(tag.stderr)")
        let rotated = packageRoot.appendingPathComponent("samples/testsrc-rotated-exif6.jpg").path
        let recipe = Recipe(name: "three", still: [
            Recipe.Derivative(name: "big", operation: .thumb, size: 900, format: .png),
            Recipe.Derivative(name: "square", operation: .thumb, size: 200, fit: .cover, format: .png),
            Recipe.Derivative(name: "small", operation: .thumb, size: 150, format: .png),
        ])
        let book = try RecipeBook.parse(Data("""
            {"recipes": {"three": {"still": [{"name": "big", "operation": "thumb", "size": 900, "format": "png"},
                                             {"name": "square", "operation": "thumb", "size": 200, "fit": "cover", "format": "png"},
                                             {"name": "small", "operation": "thumb", "size": 150, "format": "png"}]}}}
            """.utf8))
        #expect(try book.recipe(named: "three").still == recipe.still)
        for (source, type, decoder) in [(dir.path("p3.png"), MediaType.png, "libpng"), (rotated, .jpeg, "libjpeg")] {
            let (result, decodes) = Self.ingest(source, Ingester(outputRoot: dir.path("out"), recipes: book))
            #expect(result.error == nil, "\(source): \(result.error!)")
            #expect(decodes.count == 1 && decodes.first?.type == type && decodes.first?.decoder == decoder, "\(source): \(decodes)")
            let outputs = result.derivatives.map { (dir.path("out/\($0.path)"), $0.name == "square" ? "cover" : "inside") }
            #expect(outputs.count == 3)
            // Lossless outputs: 0.03-1.6 levels from vips; the P3 picture left unconverted is 14 levels off.
            try Self.expectCloseToVips(outputs, source: source, limit: 3)
        }
    }
}
