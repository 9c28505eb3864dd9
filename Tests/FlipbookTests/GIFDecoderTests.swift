import Testing
import FlipbookTestSupport
@testable import Flipbook

@Suite(.offPool) struct GIFDecoderTests {
    static let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255], green: [UInt8] = [0, 255, 0, 255]
    static let black: [UInt8] = [0, 0, 0, 255], clear: [UInt8] = [0, 0, 0, 0]

    func frames(_ gif: TestGIF, options: GIFDecodeOptions = GIFDecodeOptions()) throws -> (frames: [GIFFrame], decoder: GIFDecoder) {
        let decoder = try GIFDecoder(source: MemoryByteSource(gif.encode()), options: options)
        var result: [GIFFrame] = []
        while let frame = try decoder.nextFrame() { result.append(frame) }
        return (result, decoder)
    }

    func pixel(_ frame: GIFFrame, _ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * frame.image.width + x) * 4
        return Array(frame.image.pixels[i..<(i + 4)])
    }

    /// A 4x4 canvas: frame 0 all red, frame 1 a blue 2x2 square at (1,1) with the given disposal, frame 2 a
    /// single transparent pixel at (3,3) (so it changes nothing itself).
    func disposalGIF(_ disposal: Int) -> TestGIF {
        var gif = TestGIF(width: 4, height: 4)
        gif.frames = [
            .init(width: 4, height: 4, pixels: [UInt8](repeating: 1, count: 16)),
            .init(left: 1, top: 1, width: 2, height: 2, pixels: [2, 2, 2, 2], disposal: disposal),
            .init(left: 3, top: 3, width: 1, height: 1, pixels: [0], transparent: 0),
        ]
        return gif
    }

    @Test(arguments: [0, 1])
    func keepDisposalLeavesTheFrame(disposal: Int) throws {
        let f = try frames(disposalGIF(disposal)).frames
        #expect(f.count == 3)
        #expect(pixel(f[1], 1, 1) == Self.blue && pixel(f[1], 0, 0) == Self.red)
        #expect(pixel(f[2], 2, 2) == Self.blue && pixel(f[2], 3, 3) == Self.red)
    }

    @Test func backgroundDisposalClearsTheRectangleToTransparent() throws {
        let f = try frames(disposalGIF(2)).frames
        #expect(pixel(f[1], 1, 1) == Self.blue)
        #expect(pixel(f[2], 1, 1) == Self.clear && pixel(f[2], 2, 2) == Self.clear)
        #expect(pixel(f[2], 0, 0) == Self.red && pixel(f[2], 3, 3) == Self.red)
    }

    @Test func previousDisposalRestoresTheCanvas() throws {
        let f = try frames(disposalGIF(3)).frames
        #expect(pixel(f[1], 1, 1) == Self.blue)
        #expect(pixel(f[2], 1, 1) == Self.red && pixel(f[2], 2, 2) == Self.red)
    }

    @Test func previousDisposalOnTheFirstFrameMeansTransparent() throws {
        var gif = TestGIF(width: 2, height: 1)
        gif.frames = [.init(width: 2, height: 1, pixels: [1, 1], disposal: 3),
                      .init(left: 1, top: 0, width: 1, height: 1, pixels: [2])]
        let f = try frames(gif).frames
        #expect(pixel(f[0], 0, 0) == Self.red)
        #expect(pixel(f[1], 0, 0) == Self.clear && pixel(f[1], 1, 0) == Self.blue)
    }

    @Test func transparentIndexLetsTheCanvasShowThrough() throws {
        var gif = TestGIF(width: 2, height: 2)
        gif.frames = [.init(width: 2, height: 2, pixels: [1, 1, 1, 1]),
                      .init(width: 2, height: 2, pixels: [3, 2, 2, 3], transparent: 3)]
        let f = try frames(gif).frames
        #expect(pixel(f[1], 0, 0) == Self.red && pixel(f[1], 1, 0) == Self.blue && pixel(f[1], 1, 1) == Self.red)
        // The first frame on an empty canvas: transparent pixels stay transparent.
        var first = TestGIF(width: 2, height: 1)
        first.frames = [.init(width: 2, height: 1, pixels: [3, 1], transparent: 3)]
        let g = try frames(first).frames
        #expect(pixel(g[0], 0, 0) == Self.clear && pixel(g[0], 1, 0) == Self.red)
    }

    @Test func interlacedRowsLandWhereTheyBelong() throws {
        // 1 x 11 column whose row r has colour index r % 4: every interlace pass is exercised.
        var gif = TestGIF(width: 1, height: 11)
        let column = (0..<11).map { UInt8($0 % 4) }
        gif.frames = [.init(width: 1, height: 11, pixels: column, interlace: true)]
        let f = try frames(gif).frames
        let colours: [[UInt8]] = [Self.black, Self.red, Self.blue, Self.green]
        for y in 0..<11 { #expect(pixel(f[0], 0, y) == colours[y % 4], "row \(y)") }
    }

    @Test func localPalettesApplyToTheirFrameOnly() throws {
        var gif = TestGIF(width: 2, height: 1)
        gif.frames = [.init(width: 1, height: 1, pixels: [1], localPalette: [(0, 0, 0), (10, 20, 30)]),
                      .init(left: 1, top: 0, width: 1, height: 1, pixels: [1])]
        let f = try frames(gif).frames
        #expect(pixel(f[1], 0, 0) == [10, 20, 30, 255])
        #expect(pixel(f[1], 1, 0) == Self.red)
    }

    @Test func delaysFollowTheBrowserRule() throws {
        var gif = TestGIF(width: 1, height: 1)
        gif.frames = [0, 1, 2, 10, 150].map { .init(width: 1, height: 1, pixels: [1], delay: $0) }
        let f = try frames(gif).frames
        #expect(f.map(\.delayCentiseconds) == [0, 1, 2, 10, 150])
        #expect(f.map(\.durationMs) == [100, 100, 20, 100, 1500])
        #expect(f.map(\.presentationTimeMs) == [0, 100, 200, 220, 320])
        let info = try GIFDecoder.info(source: MemoryByteSource(gif.encode()))
        #expect(info.frameCount == 5 && info.durationMs == 1820 && info.delays == [0, 1, 2, 10, 150])
        #expect(GIFTiming.displayedMilliseconds(centiseconds: 0) == 100)
        #expect(GIFTiming.displayedMilliseconds(centiseconds: 1) == 100)
        #expect(GIFTiming.displayedMilliseconds(centiseconds: 2) == 20)
    }

    @Test(arguments: [([Int](), nil as Int?), ([0], 0), ([5], 5), ([7, 3], 7), ([65535], 65535)])
    func loopCountComesFromTheFirstNetscapeExtension(loops: [Int], expected: Int?) throws {
        var gif = TestGIF(width: 1, height: 1)
        gif.loops = loops
        gif.frames = [.init(width: 1, height: 1, pixels: [1]), .init(width: 1, height: 1, pixels: [2])]
        let (_, decoder) = try frames(gif)
        #expect(decoder.loopCount == expected)
        #expect(try GIFDecoder.info(source: MemoryByteSource(gif.encode())).loopCount == expected)
    }

    @Test func framesOutsideTheCanvasAreClipped() throws {
        var gif = TestGIF(width: 4, height: 2)
        gif.frames = [.init(width: 4, height: 2, pixels: [UInt8](repeating: 1, count: 8)),
                      .init(left: 2, top: 0, width: 2, height: 2, pixels: [2, 2, 2, 2]),
                      .init(left: 0, top: 0, width: 1, height: 1, pixels: [3])]
        var bytes = gif.encode()
        // Move frame 1 to left = 3 (half outside) and frame 2 to (100, 100) (wholly outside) by patching
        // their descriptors: giflib's encoder refuses to write such frames itself.
        // Each image descriptor (0x2C) directly follows its 8-byte Graphic Control Extension (21 F9 04 ... 00).
        let descriptors = bytes.indices.filter { i in
            i >= 8 && bytes[i] == 0x2C && bytes[i - 8] == 0x21 && bytes[i - 7] == 0xF9 && bytes[i - 6] == 4 && bytes[i - 1] == 0
        }
        try #require(descriptors.count == 3)
        bytes[descriptors[1] + 1] = 3
        bytes[descriptors[2] + 1] = 100
        bytes[descriptors[2] + 3] = 100
        let decoder = try GIFDecoder(source: MemoryByteSource(bytes))
        var f: [GIFFrame] = []
        while let frame = try decoder.nextFrame() { f.append(frame) }
        #expect(f.count == 3)
        #expect(pixel(f[1], 2, 0) == Self.red && pixel(f[1], 3, 0) == Self.blue && pixel(f[1], 3, 1) == Self.blue)
        #expect(f[2].image.pixels == f[1].image.pixels)
    }

    @Test func truncatedFileYieldsTheFramesSoFarAndAWarning() throws {
        var gif = TestGIF(width: 16, height: 16)
        gif.frames = (0..<3).map { i in .init(width: 16, height: 16, pixels: (0..<256).map { UInt8(($0 + i) % 4) }) }
        let full = gif.encode()
        let cut = Array(full.prefix(full.count - 30))  // inside the last frame's data
        let decoder = try GIFDecoder(source: MemoryByteSource(cut))
        var f: [GIFFrame] = []
        while let frame = try decoder.nextFrame() { f.append(frame) }
        #expect(f.count == 3)
        #expect(f[2].isPartial && !f[1].isPartial)
        #expect(!decoder.warnings.isEmpty)
        #expect(try GIFDecoder.info(source: MemoryByteSource(cut)).truncated)
        // Strict mode turns the same damage into an error.
        let strict = try GIFDecoder(source: MemoryByteSource(cut), options: GIFDecodeOptions(strict: true))
        #expect(throws: FlipbookError.self) { while try strict.nextFrame() != nil {} }
        // Bytes after the trailer are ignored.
        let padded = full + [UInt8](repeating: 0x1A, count: 100)
        let p = try GIFDecoder(source: MemoryByteSource(padded))
        var n = 0
        while try p.nextFrame() != nil { n += 1 }
        #expect(n == 3 && p.warnings.isEmpty)
    }

    @Test func limitsAreTypedErrorsBeforeTheWork() throws {
        var gif = TestGIF(width: 100, height: 100)
        gif.frames = (0..<5).map { _ in .init(width: 100, height: 100, pixels: [UInt8](repeating: 1, count: 10_000)) }
        let bytes = gif.encode()
        func code(_ options: GIFDecodeOptions) -> FlipbookError.Code? {
            do {
                let d = try GIFDecoder(source: MemoryByteSource(bytes), options: options)
                while try d.nextFrame() != nil {}
                return nil
            } catch let error as FlipbookError { return error.code } catch { return nil }
        }
        #expect(code(GIFDecodeOptions(maxCanvasPixels: 9_999)) == .limitExceeded)
        #expect(code(GIFDecodeOptions(maxFrames: 4)) == .limitExceeded)
        #expect(code(GIFDecodeOptions(maxTotalPixels: 40_000)) == .limitExceeded)
        #expect(code(GIFDecodeOptions(isCancelled: { true })) == .cancelled)
        #expect(code(GIFDecodeOptions()) == nil)
    }

    @Test func zeroSizeCanvasGrowsToTheFirstFrame() throws {
        var gif = TestGIF(width: 0, height: 0)
        gif.frames = [.init(left: 1, top: 1, width: 2, height: 3, pixels: [UInt8](repeating: 2, count: 6))]
        let (f, decoder) = try frames(gif)
        #expect(decoder.canvasWidth == 3 && decoder.canvasHeight == 4)
        #expect(pixel(f[0], 2, 3) == Self.blue && pixel(f[0], 0, 0) == Self.clear)
    }

    @Test func missingColourTableFallsBackToAGreyRamp() throws {
        // giflib's encoder refuses to write a frame without any colour table, so this one is assembled by
        // hand: a 2x1 screen with no global table, one 2x1 image with no local table, LZW minimum code
        // size 2 and the 3-bit codes clear(4), 0, 1, end(5) packed LSB-first: 0x0A44.
        let bytes: [UInt8] = Array("GIF89a".utf8) + [2, 0, 1, 0, 0x00, 0, 0]
            + [0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0x00] + [2, 2, 0x44, 0x0A, 0] + [0x3B]
        let decoder = try GIFDecoder(source: MemoryByteSource(bytes))
        let frame = try #require(try decoder.nextFrame())
        #expect(pixel(frame, 0, 0) == [0, 0, 0, 255] && pixel(frame, 1, 0) == [1, 1, 1, 255])
        #expect(try decoder.nextFrame() == nil)
    }

    @Test func downscaleWhileCompositingGivesOutputSizedFrames() throws {
        var gif = TestGIF(width: 200, height: 100)
        gif.frames = (0..<3).map { i in .init(width: 200, height: 100, pixels: [UInt8](repeating: UInt8(i + 1), count: 20_000)) }
        let f = try frames(gif, options: GIFDecodeOptions(maxPixelSize: 50)).frames
        #expect(f.allSatisfy { $0.image.width == 50 && $0.image.height == 25 })
        #expect(pixel(f[1], 25, 12) == Self.blue)
    }
}
