import Testing
@testable import Flipbook

/// Flipbook picks its x264 settings per GIF from its first frame (`GIFContent`, `GIFTuning.Kind`): these GIFs'
/// flatness is known from how they are drawn, and the crf the conversion reports must be their kind's.
struct GIFTuningTests {
    /// One frame of `pixels(x, y)` (palette indexes), `size` x `size`, over a 16-grey palette.
    static func gif(size: Int = 64, _ pixels: (Int, Int) -> UInt8) -> [UInt8] {
        var gif = TestGIF(width: size, height: size)
        var greys: [TestGIF.RGB] = []
        for level in 0..<16 {
            let v = UInt8(level * 17)
            greys.append((v, v, v))
        }
        gif.palette = greys
        var indexes = [UInt8]()
        for y in 0..<size { for x in 0..<size { indexes.append(pixels(x, y)) } }
        gif.frames = [.init(width: size, height: size, pixels: indexes, delay: 10)]
        return gif.encode()
    }

    @Test func flatnessCountsEqualHorizontalNeighbours() throws {
        // Stripes two pixels wide: of a 64-pixel row's 63 neighbour pairs, the 32 inside a stripe are equal.
        let stripes = Self.gif { x, _ in UInt8((x / 2) % 2) }
        let frames = try FrameSources.open(MemoryByteSource(stripes))
        var flatness: Double?
        try frames.forEachFrame { _, canvas in
            flatness = GIFContent(rgba: canvas, width: 64, height: 64).flatness
            return false
        }
        #expect(flatness == 32.0 / 63.0)
    }

    @Test(arguments: [("flat blocks", 28), ("stripes", 27), ("noise", 25)])
    func theCRFFollowsTheKindOfPicture(name: String, crf: Int) throws {
        var seed: UInt32 = 12345
        let bytes: [UInt8] = switch name {
        case "flat blocks": Self.gif { x, y in UInt8((x / 16 + y / 16) % 16) }  // flatness 60/63
        case "stripes": Self.gif { x, _ in UInt8((x / 2) % 2) }  // 32/63
        default: Self.gif { _, _ in  // a 16-colour LCG noise: about 1/16
            seed = seed &* 1_103_515_245 &+ 12345
            return UInt8((seed >> 16) & 15)
        }
        }
        let result = try GIFToVideo.convert(MemoryByteSource(bytes))
        #expect(result.crf == crf, "\(name): crf \(result.crf)")
        // A crf the caller gives is used as it is.
        var options = VideoConversionOptions()
        options.crf = 30
        options.automaticTuning = false
        #expect(try GIFToVideo.convert(MemoryByteSource(bytes), options: options).crf == 30)
    }

    /// A drawn GIF gets x264's exhaustive motion search only up to `GIFTuning.searchBudget` pixels times
    /// frames, counted before any frame is decoded: for a streamed GIF (a `ByteSource`, as the CLI and the
    /// server convert) the count comes from its block scan. 256x256 flat blocks, then 16x16 patches moving
    /// over them: 8 frames are 0.5 Mi pixel-frames, 40 are 2.5 Mi (the budget is 2 Mi), both a few KB of
    /// GIF, so the size budget of the thorough analysis is not what decides.
    @Test(arguments: [(8, true), (40, false)])
    func theExhaustiveSearchIsKeptToSmallGIFs(frames: Int, searched: Bool) throws {
        var gif = TestGIF(width: 256, height: 256)
        gif.palette = (0..<16).map { (level: Int) -> TestGIF.RGB in
            let v = UInt8(level * 17)
            return (v, 255 - v, v / 2)
        }
        var first = [UInt8]()
        for y in 0..<256 { for x in 0..<256 { first.append(UInt8((x / 32 + y / 32) % 16)) } }
        gif.frames = [.init(width: 256, height: 256, pixels: first, delay: 10)]
        for i in 1..<frames {
            gif.frames.append(.init(left: (i * 24) % 240, top: (i * 40) % 240, width: 16, height: 16,
                                    pixels: [UInt8](repeating: UInt8(i % 16), count: 256), delay: 10))
        }
        let bytes = gif.encode()
        #expect(bytes.count < GIFTuning.analysisBudget)
        let result = try GIFToVideo.convert(MemoryByteSource(bytes))
        #expect(result.gifFrames == frames)
        let params = try #require(result.x264Params)
        #expect(params.contains("qcomp=0.75"), "\(params)")  // a drawn GIF's rate curve
        #expect(params.contains("me=esa") == searched, "\(frames) frames: \(params)")
    }
}
