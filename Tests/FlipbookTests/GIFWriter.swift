import CGIF
@testable import Flipbook

/// Builds small GIFs with giflib's encoder (EGif*), so each decoder rule is tested on a file whose
/// content is known exactly.
struct TestGIF {
    typealias RGB = (UInt8, UInt8, UInt8)

    struct Frame {
        var left = 0, top = 0, width: Int, height: Int
        /// Palette indexes, row-major, in display order (the writer interlaces them if asked).
        var pixels: [UInt8]
        var localPalette: [RGB]? = nil
        var delay = 10
        var disposal = 0
        var transparent: Int? = nil
        var interlace = false
        var graphicControl = true
    }

    var width: Int, height: Int
    var palette: [RGB]? = [(0, 0, 0), (255, 0, 0), (0, 0, 255), (0, 255, 0)]
    var loops: [Int] = []
    var frames: [Frame] = []

    final class Sink {
        var bytes: [UInt8] = []
    }

    static func colorMap(_ colors: [RGB]) -> UnsafeMutablePointer<ColorMapObject> {
        var count = 2
        while count < colors.count { count *= 2 }
        let map = GifMakeMapObject(Int32(count), nil)!
        for (i, c) in colors.enumerated() {
            map.pointee.Colors[i] = GifColorType(Red: c.0, Green: c.1, Blue: c.2)
        }
        return map
    }

    func encode() -> [UInt8] {
        let sink = Sink()
        let retained = Unmanaged.passRetained(sink)
        defer { retained.release() }
        var error: Int32 = 0
        let gif = EGifOpen(retained.toOpaque(), { gif, data, count in
            let sink = Unmanaged<TestGIF.Sink>.fromOpaque(gif!.pointee.UserData).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
            return count
        }, &error)!
        EGifSetGifVersion(gif, true)
        let global = palette.map(Self.colorMap)
        precondition(EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, global) == GIF_OK)
        if let global { GifFreeMapObject(global) }
        for loop in loops {
            EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE)
            var id = Array("NETSCAPE2.0".utf8)
            EGifPutExtensionBlock(gif, 11, &id)
            var value: [UInt8] = [1, UInt8(loop & 0xFF), UInt8(loop >> 8)]
            EGifPutExtensionBlock(gif, 3, &value)
            EGifPutExtensionTrailer(gif)
        }
        for frame in frames {
            if frame.graphicControl {
                var gce: [UInt8] = [UInt8(frame.disposal << 2) | (frame.transparent != nil ? 1 : 0),
                                    UInt8(frame.delay & 0xFF), UInt8(frame.delay >> 8), UInt8(frame.transparent ?? 0)]
                precondition(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, &gce) == GIF_OK)
            }
            let local = frame.localPalette.map(Self.colorMap)
            // giflib 5.2.1's EGifPutImageDesc sets the handle's image map to NULL without freeing it when a frame
            // has no local palette after one that had (LeakSanitizer found it in `make sanitize`): free it here.
            if local == nil, let previous = gif.pointee.Image.ColorMap {
                GifFreeMapObject(previous)
                gif.pointee.Image.ColorMap = nil
            }
            precondition(EGifPutImageDesc(gif, Int32(frame.left), Int32(frame.top), Int32(frame.width), Int32(frame.height),
                                          frame.interlace, local) == GIF_OK)
            if let local { GifFreeMapObject(local) }
            let order = frame.interlace ? GIFDecoder.interlacedRows(frame.height) : Array(0..<frame.height)
            for row in order {
                var line = Array(frame.pixels[(row * frame.width)..<((row + 1) * frame.width)])
                precondition(EGifPutLine(gif, &line, Int32(frame.width)) == GIF_OK)
            }
        }
        EGifCloseFile(gif, &error)
        return sink.bytes
    }
}
