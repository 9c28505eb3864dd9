import CGIF

/// An animated GIF written into memory with giflib's encoder (EGif): one global palette, a NETSCAPE2.0
/// loop extension, and frames as rectangles of palette indexes, each after its graphic control
/// extension (delay, transparency, disposal "leave in place"). Owns giflib's handle; deinit closes it
/// if `finish` was not reached.
package final class GIFFileWriter {
    /// Where giflib's output callback appends the bytes.
    package final class Sink {
        package var bytes: [UInt8] = []
    }

    package let width: Int, height: Int
    private let sink = Sink()
    private var file: UnsafeMutablePointer<GifFileType>?

    /// Starts a GIF89a of `width` x `height` whose global colour table holds `palette`, padded with black
    /// to a power of two of at least `tableSize` entries (so indexes past the colours, such as a
    /// transparent one, are valid).
    package init(width: Int, height: Int, palette: [RGBColor], tableSize: Int) throws {
        guard (1...65535).contains(width), (1...65535).contains(height) else {
            throw FlipbookError(.invalidArgument, "GIF pictures are 1-65535 pixels a side, not \(width)x\(height)")
        }
        guard !palette.isEmpty, palette.count <= 256, tableSize <= 256 else {
            throw FlipbookError(.invalidArgument, "a GIF palette holds 1-256 colours, not \(max(palette.count, tableSize))")
        }
        self.width = width
        self.height = height
        var error: Int32 = 0
        // The sink lives as long as self, and self outlives the handle.
        file = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), { gif, data, count in
            guard let gif, let data, count > 0 else { return 0 }
            let sink = Unmanaged<GIFFileWriter.Sink>.fromOpaque(gif.pointee.UserData).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
            return count
        }, &error)
        guard let file else { throw Self.failure("opening the GIF encoder", error) }
        EGifSetGifVersion(file, true)
        var entries = 2
        while entries < max(palette.count, tableSize) { entries *= 2 }
        guard let map = GifMakeMapObject(Int32(entries), nil) else { throw FlipbookError(.codec, "giflib could not allocate a colour map") }
        defer { GifFreeMapObject(map) }
        for k in 0..<entries {
            let c = k < palette.count ? palette[k] : RGBColor(r: 0, g: 0, b: 0)
            map.pointee.Colors[k] = GifColorType(Red: c.r, Green: c.g, Blue: c.b)
        }
        try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, map), "writing the GIF screen descriptor")
    }

    /// The NETSCAPE2.0 application extension with a loop count of 0: play forever.
    package func loopForever() throws {
        let file = try open()
        try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), "writing the loop extension")
        var id = Array("NETSCAPE2.0".utf8)
        try check(EGifPutExtensionBlock(file, Int32(id.count), &id), "writing the loop extension")
        var loop: [UInt8] = [1, 0, 0]  // sub-block 1: loop count, little-endian; 0 is forever
        try check(EGifPutExtensionBlock(file, Int32(loop.count), &loop), "writing the loop extension")
        try check(EGifPutExtensionTrailer(file), "writing the loop extension")
    }

    /// One frame: `frame.indexes` at (x, y), shown for `delayCentiseconds`. Delays beyond the 16-bit field
    /// (655 s) continue on 1x1 fully transparent frames, which change nothing on screen.
    package func put(_ frame: MappedFrame, transparentIndex: UInt8, delayCentiseconds: Int) throws {
        guard frame.x >= 0, frame.y >= 0, frame.width > 0, frame.height > 0, frame.x + frame.width <= width,
              frame.y + frame.height <= height, frame.indexes.count == frame.width * frame.height
        else { throw FlipbookError(.invalidArgument, "GIF frame rectangle outside the \(width)x\(height) picture") }
        var rest = max(0, delayCentiseconds)
        let first = min(rest, 0xFFFF)
        rest -= first
        try putImage(x: frame.x, y: frame.y, width: frame.width, height: frame.height, indexes: frame.indexes,
                     transparent: frame.usesTransparency ? transparentIndex : nil, delay: first)
        while rest > 0 {
            let delay = min(rest, 0xFFFF)
            rest -= delay
            try putImage(x: 0, y: 0, width: 1, height: 1, indexes: [transparentIndex], transparent: transparentIndex, delay: delay)
        }
    }

    private func putImage(x: Int, y: Int, width: Int, height: Int, indexes: [UInt8], transparent: UInt8?, delay: Int) throws {
        let file = try open()
        // Graphic control: disposal 1 (leave in place) so transparent pixels show the frame before.
        var control: [UInt8] = [1 << 2 | (transparent != nil ? 1 : 0), UInt8(delay & 0xFF), UInt8(delay >> 8), transparent ?? 0]
        try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(control.count), &control), "writing a graphic control extension")
        try check(EGifPutImageDesc(file, Int32(x), Int32(y), Int32(width), Int32(height), false, nil), "writing an image descriptor")
        var pixels = indexes  // giflib masks the line in place
        try check(EGifPutLine(file, &pixels, Int32(pixels.count)), "compressing a GIF frame")
    }

    /// Writes the trailer and returns the file.
    package func finish() throws -> [UInt8] {
        let file = try open()
        self.file = nil
        var error: Int32 = 0
        guard EGifCloseFile(file, &error) == GIF_OK else { throw Self.failure("finishing the GIF", error) }  // frees `file` either way
        return sink.bytes
    }

    private func open() throws -> UnsafeMutablePointer<GifFileType> {
        guard let file else { throw FlipbookError(.invalidArgument, "the GIF is already finished") }
        return file
    }

    private func check(_ status: Int32, _ what: String) throws {
        guard status != GIF_OK else { return }
        throw Self.failure(what, file?.pointee.Error ?? 0)
    }

    private static func failure(_ what: String, _ code: Int32) -> FlipbookError {
        let why = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return FlipbookError(.codec, "\(what) failed", underlying: why, context: what)
    }

    deinit {
        if let file {
            var error: Int32 = 0
            EGifCloseFile(file, &error)
        }
    }
}
