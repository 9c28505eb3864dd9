import Testing
import FlipbookTestSupport
@testable import Flipbook

@Suite(.offPool) struct MediaTypeTests {
    /// The type a corpus file must sniff as, from its folder and MANIFEST note (independent of our code).
    static func expectedType(_ entry: Corpus.Entry) -> MediaType {
        let name = entry.path.lowercased()
        switch entry.folder {
        case "gif": return .gif
        case "jpeg": return .jpeg
        case "png":
            if entry.note.contains("signature mangled") { return .unknown }
            return entry.note.contains("APNG") ? .apng : .png
        case "webp": return entry.note.contains("ANIMATED") ? .animatedWebP : .webp
        case "video":
            if entry.note.contains("mkv/webm") {
                // roadtrip-vp92-10bit.webm is named .webm but its EBML DocType says "matroska" (bytes 0x1F-0x26);
                // the bytes win.
                if name.hasSuffix("roadtrip-vp92-10bit.webm") { return .matroska }
                return name.hasSuffix(".webm") ? .webm : .matroska
            }
            return name.hasSuffix(".mov") ? .mov : .mp4
        default: return .unknown
        }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func corpusFilesSniffAsTheirManifestSays() throws {
        #expect(Corpus.entries.count >= 150)
        for entry in Corpus.entries {
            let source = try FileByteSource(path: entry.url.path)
            #expect(MediaType.sniff(source) == Self.expectedType(entry), "\(entry.path)")
        }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func truncatedPrefixesAreUnknownOrTheRightType() throws {
        for entry in Corpus.entries {
            let bytes = try FileByteSource(path: entry.url.path).bytes(at: 0, length: 80)
            let full = Self.expectedType(entry)
            for length in 0...bytes.count {
                let type = MediaType.sniff(MemoryByteSource(bytes.prefix(length)))
                // A PNG prefix cut before acTL cannot know it is animated.
                let allowed: Set<MediaType> = [.unknown, full, full == .apng ? .png : full]
                #expect(allowed.contains(type), "\(entry.path) prefix \(length): \(type)")
            }
        }
    }

    static func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
        let brands = compatible.flatMap { Array($0.utf8) }
        let size = 16 + brands.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0] + brands + [UInt8](repeating: 0, count: 16)
    }

    @Test(arguments: [
        (ftyp("isom", ["isom", "avc1"]), MediaType.mp4),
        (ftyp("qt  "), .mov),
        (ftyp("M4V ", ["M4V ", "mp42"]), .m4v),
        (ftyp("avif", ["mif1", "avif"]), .avif),
        (ftyp("mif1", ["mif1", "heic"]), .heic),
        (ftyp("mif1", ["mif1", "avif"]), .avif),
        (ftyp("heic", ["mif1"]), .heic),
        ([0, 0, 0, 8] + Array("wide".utf8) + [0, 0, 0, 8] + Array("mdat".utf8), .mov),
        ([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x82, 0x84] + Array("webm".utf8), .webm),
        ([0x1A, 0x45, 0xDF, 0xA3, 0xA3, 0x42, 0x82, 0x88] + Array("matroska".utf8), .matroska),
        (Array("II".utf8) + [0x2A, 0, 8, 0, 0, 0], .tiff),
        (Array("MM".utf8) + [0, 0x2A, 0, 0, 0, 8], .tiff),
        (Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0, 1, 0, 0, 0], .bmp),
        (Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [99, 0, 0, 0], .unknown),
        (Array("GIF87a".utf8), .gif),
        (Array("GIF89a".utf8), .gif),
        (Array("GIF90a".utf8), .unknown),
        (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8X".utf8) + [0, 0, 0, 0, 0x02], .animatedWebP),
        (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVEfmt ".utf8), .unknown),
        ([0xFF, 0xD8, 0xFF, 0xE0], .jpeg),
        ([0xFF, 0xD8], .unknown),
        ([], .unknown),
        ([0x00], .unknown),
    ] as [([UInt8], MediaType)])
    func syntheticHeaders(bytes: [UInt8], expected: MediaType) {
        #expect(MediaType.sniff(MemoryByteSource(bytes)) == expected)
    }

    @Test func routerSendsEachTypeToItsPipeline() throws {
        let router = MediaRouter.standard
        #expect(try router.pipeline(for: .jpeg).name == "still")
        #expect(try router.pipeline(for: .webp).name == "still")
        #expect(try router.pipeline(for: .gif).name == "gif")
        #expect(try router.pipeline(for: .mp4).name == "video")
        #expect(try router.pipeline(for: .webm).name == "video")
        #expect(throws: FlipbookError.self) { try router.pipeline(for: .unknown) }
        // AVIF and HEIC stills go through libheif in the still pipeline.
        #expect(try router.pipeline(for: .heic).name == "still")
        #expect(try router.pipeline(for: .avif).name == "still")
    }

    /// A new pipeline plugs in by registration; the router code does not change.
    @Test func registeredPipelineTakesOverAType() throws {
        struct Custom: MediaPipeline {
            var name: String { "custom" }
            func accepts(_ type: MediaType) -> Bool { type == .gif }
            func probe(_ input: MediaInput) throws -> MediaInfo { MediaInfo(type: .gif) }
            func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
                Image(width: 1, height: 1, channels: 3)
            }
        }
        var router = MediaRouter.standard
        router.register(Custom())
        #expect(try router.pipeline(for: .gif).name == "custom")
        #expect(try router.pipeline(for: .jpeg).name == "still")
    }
}
