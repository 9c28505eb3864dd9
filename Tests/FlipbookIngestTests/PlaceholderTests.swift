import Flipbook
import FlipbookIngest
import FlipbookTestSupport
import Foundation
import Testing

/// ThumbHash and BlurHash against independent implementations: PyPI `blurhash` must make the same string
/// from the same pixels, and PyPI `thumbhash-python` must decode our ThumbHash to the source's aspect ratio
/// and average colour, with the source read by Pillow (Tests/ingest/ingest_checks.py).
@Suite(.offPool) struct PlaceholderTests {
    struct Entry: Encodable {
        var name: String
        var rgb: String
        var width: Int
        var height: Int
        var blurhash: String
        var thumbhash: String
        var source: String?
        var rgba: String?
        var sourceWidth: Int?
        var sourceHeight: Int?
    }

    /// Pixels whose every channel varies: gradients, a ramp of transparency, a solid colour (no AC at all),
    /// a single pixel, portrait and landscape extremes.
    static func synthetic() -> [(String, Image)] {
        func make(_ w: Int, _ h: Int, _ channels: Int, _ f: (Int, Int, Int) -> Int) -> Image {
            var pixels = [UInt8](repeating: 0, count: w * h * channels)
            for y in 0..<h { for x in 0..<w { for c in 0..<channels { pixels[(y * w + x) * channels + c] = UInt8(truncatingIfNeeded: f(x, y, c)) } } }
            return Image(width: w, height: h, channels: channels, pixels: pixels)
        }
        return [
            ("gradient-37x23", make(37, 23, 3) { x, y, c in [x * 255 / 36, y * 255 / 22, (x + y) * 4][c] }),
            ("rings-100x100", make(100, 100, 3) { x, y, c in Int(127.5 + 127.5 * sin(Double((x - 50) * (x - 50) + (y - 40) * (y - 40)) / Double(90 + 40 * c))) }),
            ("alpha-ramp-64x48", make(64, 48, 4) { x, y, c in c == 3 ? x * 4 : [200, 40 + y * 4, 90][c] }),
            ("solid-20x30", make(20, 30, 3) { _, _, c in [30, 144, 255][c] }),
            ("single-1x1", make(1, 1, 3) { _, _, c in [250, 10, 120][c] }),
            ("strip-100x3", make(100, 3, 3) { x, y, c in (x * 7 + y * 50 + c * 80) % 256 }),
            ("tall-5x100", make(5, 100, 4) { x, y, c in c == 3 ? (y < 50 ? 255 : 0) : (x * 60 + y + c * 30) % 256 }),
        ]
    }

    @Test func hashesMatchIndependentImplementations() throws {
        let dir = try TemporaryDirectory()
        var entries: [Entry] = []
        func add(_ name: String, _ image: Image, source: String?) throws {
            let placeholder = Placeholder(image: image)
            let flat = image.flattened()
            let rgb = dir.path("\(name).rgb")
            try Data(flat.pixels).write(to: URL(fileURLWithPath: rgb))
            var entry = Entry(name: name, rgb: rgb, width: image.width, height: image.height, blurhash: placeholder.blurhash,
                              thumbhash: placeholder.thumbhash, source: source)
            if source == nil {
                entry.rgba = dir.path("\(name).rgba")
                try Data(image.withAlpha().pixels).write(to: URL(fileURLWithPath: entry.rgba!))
                entry.sourceWidth = image.width
                entry.sourceHeight = image.height
            }
            entries.append(entry)
        }
        for (name, image) in Self.synthetic() { try add(name, image, source: nil) }

        // Real files, shrunk the way ingestion shrinks them; the ThumbHash is checked against Pillow's view of
        // the whole source (upright by its EXIF orientation).
        var files = ["testsrc-rotated-exif6.jpg", "alpha-640x480.png", "mandelbrot-1600x1200.jpg", "box-transparent-120x90.gif",
                     "testsrc-160x120-2s.gif", "cellauto-400x300.webp"].map { packageRoot.appendingPathComponent("samples/\($0)").path }
        let corpus = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] ?? packageRoot.appendingPathComponent("../shared/corpus").path
        if FileManager.default.fileExists(atPath: "\(corpus)/MANIFEST.tsv") {
            files += ["jpeg/exif-orientation-examples/Landscape_6.jpg", "jpeg/exif-orientation-examples/Portrait_3.jpg",
                      "gif/pillow/transparent.gif"].map { "\(corpus)/\($0)" }
        } else {
            print("PlaceholderTests: corpus not found (set FLIPBOOK_CORPUS or put it at ../shared/corpus); samples only")
        }
        for file in files {
            let image = try MediaInput(path: file).thumbnailImage(Placeholder.request)
            #expect(max(image.width, image.height) <= Placeholder.side)
            try add(URL(fileURLWithPath: file).lastPathComponent, image, source: file)
        }

        let manifest = dir.path("manifest.json")
        try JSONEncoder().encode(entries).write(to: URL(fileURLWithPath: manifest))
        let result = try Run.program(Run.python, [packageRoot.appendingPathComponent("Tests/ingest/ingest_checks.py").path, "placeholders", manifest])
        print(result.stdout)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").filter { $0.contains("blurhash") && $0.contains("ok") }.count == entries.count)
    }

    @Test func thumbHashIsShortAndBlurHashHasFourByThreeComponents() throws {
        for (name, image) in Self.synthetic() {
            let placeholder = Placeholder(image: image)
            let bytes = try #require(Data(base64Encoded: placeholder.thumbhash), "\(name)")
            #expect((5...25).contains(bytes.count), "\(name): \(bytes.count) bytes")
            // 1 size char + 1 max AC + 4 DC + 2 per AC component (11 of them).
            #expect(placeholder.blurhash.count == 6 + 2 * 11, "\(name): \(placeholder.blurhash)")
            #expect(placeholder.blurhash.first == "L", "\(name): 4 x 3 components are coded as L")
        }
    }
}
