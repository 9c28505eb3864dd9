import CGIF

/// Streams a GIF's frames, composited the way browsers do, one at a time: memory is the canvas, one saved
/// copy for disposal 3, and one line buffer, whatever the frame count.
///
/// ```swift
/// let decoder = try GIFDecoder(source: try FileByteSource(path: "a.gif"))
/// while let frame = try decoder.nextFrame() { use(frame.image, frame.presentationTimeMs) }
/// ```
package final class GIFDecoder {
    package let options: GIFDecodeOptions
    /// The logical screen size; for a zero-size screen, the extent of the first frame.
    package private(set) var canvasWidth: Int
    package private(set) var canvasHeight: Int
    /// NETSCAPE2.0/ANIMEXTS1.0 loop count (0: forever), once its extension has been read; nil if absent.
    package private(set) var loopCount: Int?
    /// Problems decoding recovered from (a truncated file, data that is not a block).
    package private(set) var warnings: [String] = []
    /// Some Graphic Control so far declared a transparent colour, or the first frame does not cover the
    /// canvas: the block scan's `GIFInfo.hasTransparency`, learnt while decoding.
    package private(set) var sawTransparency = false
    /// Frames decoded so far, and their displayed duration.
    package var framesDecoded: Int { index }
    package var durationDecodedMs: Int { time }

    private let reader: GIFReader
    private var canvas: [UInt8] = []
    private var saved: [UInt8] = []
    private var compressed: [UInt8] = []
    private var lzw = LZWDecoder()
    private var previous: (disposal: GIFDisposal, x0: Int, y0: Int, x1: Int, y1: Int)?
    private var control = GraphicControl()
    private var loopSeen = false
    private var finished = false
    private var index = 0
    private var time = 0
    private var decodedPixels = 0

    package struct GraphicControl {
        package var disposal = GIFDisposal.unspecified
        package var delay = 0
        package var transparentIndex: Int?

        package init() {}

        /// From a Graphic Control Extension (label 0xF9), or nil if `blocks` is not a well-formed one.
        package init?(code: Int, blocks: [[UInt8]]) {
            guard code == 0xF9, let b = blocks.first, b.count >= 4 else { return nil }
            disposal = GIFDisposal(raw: Int(b[0] >> 2 & 0x07))
            delay = Int(b[1]) | Int(b[2]) << 8
            transparentIndex = b[0] & 0x01 != 0 ? Int(b[3]) : nil
        }
    }

    /// The loop count of a NETSCAPE2.0 / ANIMEXTS1.0 application extension (label 0xFF), or nil.
    package static func loopCount(code: Int, blocks: [[UInt8]]) -> Int? {
        guard code == 0xFF, blocks.count >= 2 else { return nil }
        let id = String(decoding: blocks[0], as: UTF8.self)
        guard id == "NETSCAPE2.0" || id == "ANIMEXTS1.0", blocks[1].count >= 3, blocks[1][0] == 1 else { return nil }
        return Int(blocks[1][1]) | Int(blocks[1][2]) << 8
    }

    /// Opens the GIF and reads its header. Throws if the canvas is over `options.limits.canvasPixelLimit`,
    /// before allocating it.
    package init(source: any ByteSource, options: GIFDecodeOptions = GIFDecodeOptions()) throws {
        self.options = options
        reader = try GIFReader(source: source)
        canvasWidth = Int(reader.gif.pointee.SWidth)
        canvasHeight = Int(reader.gif.pointee.SHeight)
        try checkCanvas()
    }

    private func checkCanvas() throws {
        try options.limits.checkAnimation(width: canvasWidth, height: canvasHeight, frames: 0, durationMs: 0, what: "GIF")
    }

    /// The next composited frame, or nil after the last. A damaged or truncated file ends with the
    /// frames decoded so far and a warning (or throws, in strict mode, or if no frame could be decoded).
    /// Costs one copy of the canvas (or one downscale) per frame; `forEachFrame` avoids even that.
    package func nextFrame() throws -> GIFFrame? {
        guard let meta = try advance() else { return nil }
        return GIFFrame(meta, image: outputImage())
    }

    /// Calls `body` for every remaining frame with the canvas itself (RGBA, canvasWidth x canvasHeight),
    /// valid only during the call: no per-frame copy. `maxPixelSize` does not apply here.
    package func forEachFrame(_ body: (GIFFrameInfo, UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        while let meta = try advance() {
            try canvas.withUnsafeBufferPointer { try body(meta, $0) }
        }
    }

    /// Composites the next frame onto the canvas and describes it.
    private func advance() throws -> GIFFrameInfo? {
        while !finished {
            if options.isCancelled?() == true || Cancellation.isRequested { throw FlipbookError(.cancelled, "GIF decoding was cancelled") }
            let record: GIFReader.Record
            do {
                record = try reader.nextRecord()
            } catch let error as FlipbookError {
                try endEarly(error)
                return nil
            }
            switch record {
            case .end:
                finished = true
                return nil
            case .extension(let code, let blocks):
                readExtension(code: code, blocks: blocks)
            case .image:
                return try decodeImage()
            }
        }
        return nil
    }

    private func endEarly(_ error: FlipbookError) throws {
        finished = true
        // A source that failed to read is not a file cut short: nothing is made from part of it.
        if let failed = reader.input.readError { throw failed }
        if options.strict || index == 0 { throw error }
        warnings.append("decoding stopped after frame \(index - 1): \(error)")
    }

    /// Graphic Control applies to the next image only; the first loop count wins; comments, plain text
    /// and unknown labels are skipped.
    private func readExtension(code: Int, blocks: [[UInt8]]) {
        if let gce = GraphicControl(code: code, blocks: blocks) {
            control = gce
            if gce.transparentIndex != nil { sawTransparency = true }
        } else if !loopSeen, let loops = Self.loopCount(code: code, blocks: blocks) {
            loopCount = loops
            loopSeen = true
        }
    }

    private func decodeImage() throws -> GIFFrameInfo? {
        let desc: GifImageDesc
        do {
            desc = try reader.imageHeader()
        } catch let error as FlipbookError {
            try endEarly(error)
            return nil
        }
        guard index < options.limits.maxFrames else {
            throw FlipbookError(.limitExceeded, "GIF has more than \(options.limits.maxFrames) frames")
        }
        let left = Int(desc.Left), top = Int(desc.Top), width = Int(desc.Width), height = Int(desc.Height)
        decodedPixels += width * height
        guard decodedPixels <= options.limits.maxTotalPixels else {
            throw FlipbookError(.limitExceeded, "GIF frames decode to more than \(options.limits.maxTotalPixels / 1_000_000) MP in total")
        }
        if canvas.isEmpty {
            // A zero-size logical screen grows to the first frame, as browsers do.
            if canvasWidth == 0 || canvasHeight == 0 {
                canvasWidth = max(canvasWidth, left + width)
                canvasHeight = max(canvasHeight, top + height)
                guard canvasWidth > 0, canvasHeight > 0 else {
                    throw FlipbookError(.corrupt, "GIF has a zero-size canvas and a zero-size first frame")
                }
                try checkCanvas()
            }
            canvas = [UInt8](repeating: 0, count: canvasWidth * canvasHeight * 4)
            if left > 0 || top > 0 || width < canvasWidth || height < canvasHeight { sawTransparency = true }
        }
        let frameControl = control
        control = GraphicControl()
        let duration = GIFTiming.displayedMilliseconds(centiseconds: frameControl.delay)
        guard time + duration <= options.limits.maxDurationMs else {
            throw FlipbookError(.limitExceeded, "GIF lasts more than \(options.limits.maxDurationMs) ms, over the limit")
        }

        // Dispose of the previous frame.
        if let p = previous {
            switch p.disposal {
            case .background: clear(x0: p.x0, y0: p.y0, x1: p.x1, y1: p.y1)
            case .previous where saved.count == canvas.count: canvas = saved
            default: break
            }
        }
        if frameControl.disposal == .previous {
            saved = canvas  // a copy once the canvas is written to; the buffer is reused across frames
        }

        let x0 = min(max(0, left), canvasWidth), x1 = min(max(0, left + width), canvasWidth)
        let y0 = min(max(0, top), canvasHeight), y1 = min(max(0, top + height), canvasHeight)
        var partial = false
        compressed.removeAll(keepingCapacity: true)
        var codeSize = 0
        var dataError: FlipbookError?
        do {
            try reader.readImageData(into: &compressed, codeSize: &codeSize)
        } catch let error as FlipbookError {
            dataError = error  // decode what arrived; the frame is then incomplete
        }
        if width > 0, height > 0 {
            let palette = Self.palette(desc.ColorMap ?? reader.gif.pointee.SColorMap, transparent: frameControl.transparentIndex)
            let rows = desc.Interlace ? Self.interlacedRows(height) : nil
            let outcome = draw(width: width, height: height, left: left, top: top, codeSize: codeSize, rows: rows, palette: palette)
            if case .incomplete(let done) = outcome {
                partial = true
                try noteTruncation(dataError ?? FlipbookError(.corrupt, "GIF frame \(index) has bad image data after row \(done) of \(height)"))
            }
        }
        if let dataError, !partial {
            partial = true
            try noteTruncation(dataError)
        }

        previous = (frameControl.disposal, x0, y0, x1, y1)
        let info = GIFFrameInfo(index: index, presentationTimeMs: time, durationMs: duration, delayCentiseconds: frameControl.delay,
                                disposal: frameControl.disposal, isPartial: partial)
        index += 1
        time += duration
        if partial { finished = true }
        return info
    }

    private func noteTruncation(_ error: FlipbookError) throws {
        if let failed = reader.input.readError { throw failed }
        if options.strict { throw error }
        warnings.append("frame \(index) is incomplete: \(error)")
    }

    /// LZW-decodes the current image and paints its opaque pixels onto the canvas, row by row.
    private func draw(width: Int, height: Int, left: Int, top: Int, codeSize: Int, rows: [Int]?, palette: [UInt32])
        -> LZWDecoder.Outcome
    {
        let cw = canvasWidth, ch = canvasHeight
        let x0 = max(0, left), x1 = min(cw, left + width)
        return compressed.withUnsafeBytes { data in
            canvas.withUnsafeMutableBytes { raw in
                let pixels = raw.bindMemory(to: UInt32.self)
                return palette.withUnsafeBufferPointer { pal in
                    lzw.decode(data, minimumCodeSize: codeSize, width: width, height: height) { r, line in
                        let y = top + (rows?[r] ?? r)
                        guard y >= 0, y < ch, x0 < x1 else { return }
                        let rowBase = y * cw
                        for x in x0..<x1 {
                            let v = pal[Int(line[x - left])]
                            if v != 0 { pixels[rowBase + x] = v }
                        }
                    }
                }
            }
        }
    }

    private func clear(x0: Int, y0: Int, x1: Int, y1: Int) {
        guard x0 < x1 else { return }
        canvas.withUnsafeMutableBytes { raw in
            let pixels = raw.bindMemory(to: UInt32.self)
            for y in y0..<y1 {
                for x in x0..<x1 { pixels[y * canvasWidth + x] = 0 }
            }
        }
    }

    private func outputImage() -> Image {
        let full = Image(width: canvasWidth, height: canvasHeight, channels: 4, pixels: canvas)
        guard let size = options.maxPixelSize, size < max(canvasWidth, canvasHeight) else { return full }
        let plan = ThumbnailPlan.make(source: Size(width: canvasWidth, height: canvasHeight), maxPixelSize: size, fit: .inside)
        return Resampler.resample(full, region: (0, 0, Double(canvasWidth), Double(canvasHeight)), to: plan.output)
    }

    /// 256 RGBA entries packed as little-endian UInt32; 0 marks "do not paint" (the transparent index and
    /// indexes past the colour table). With no colour table at all, a grey ramp (index i is grey level i),
    /// as Pillow does.
    package static func palette(_ map: UnsafeMutablePointer<ColorMapObject>?, transparent: Int?) -> [UInt32] {
        var table = [UInt32](repeating: 0, count: 256)
        if let map, let colors = map.pointee.Colors {
            for i in 0..<min(256, Int(map.pointee.ColorCount)) {
                let c = colors[i]
                table[i] = UInt32(c.Red) | UInt32(c.Green) << 8 | UInt32(c.Blue) << 16 | 0xFF00_0000
            }
        } else {
            for i in 0..<256 { table[i] = UInt32(i) * 0x0001_0101 | 0xFF00_0000 }
        }
        if let transparent, transparent < 256 { table[transparent] = 0 }
        return table
    }

    /// The canvas row of each decoded row of an interlaced image (passes: 0 +8, 4 +8, 2 +4, 1 +2).
    package static func interlacedRows(_ height: Int) -> [Int] {
        var rows: [Int] = []
        rows.reserveCapacity(height)
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows.append(contentsOf: stride(from: start, to: height, by: step))
        }
        return rows
    }
}

extension GIFDecoder {
    /// Scans every block without decompressing pixels: frame count, delays, loop count, transparency.
    package static func info(source: any ByteSource, options: GIFDecodeOptions = GIFDecodeOptions()) throws -> GIFInfo {
        let reader = try GIFReader(source: source)
        let width = Int(reader.gif.pointee.SWidth), height = Int(reader.gif.pointee.SHeight)
        var info = GIFInfo(width: width, height: height, frameCount: 0, delays: [], durationMs: 0, loopCount: nil,
                           hasTransparency: false, truncated: false)
        var control = GraphicControl()
        var loopSeen = false
        scan: while true {
            do {
                switch try reader.nextRecord() {
                case .end:
                    break scan
                case .extension(let code, let blocks):
                    if let gce = GraphicControl(code: code, blocks: blocks) {
                        control = gce
                        if gce.transparentIndex != nil { info.hasTransparency = true }
                    } else if !loopSeen, let loops = loopCount(code: code, blocks: blocks) {
                        info.loopCount = loops
                        loopSeen = true
                    }
                case .image:
                    let desc = try reader.imageHeader()
                    if info.frameCount == 0 {
                        if info.width == 0 || info.height == 0 {
                            info.width = max(info.width, Int(desc.Left) + Int(desc.Width))
                            info.height = max(info.height, Int(desc.Top) + Int(desc.Height))
                        }
                        if desc.Left > 0 || desc.Top > 0 || Int(desc.Width) < info.width || Int(desc.Height) < info.height {
                            info.hasTransparency = true
                        }
                    }
                    guard info.frameCount < options.limits.maxFrames else {
                        throw FlipbookError(.limitExceeded, "GIF has more than \(options.limits.maxFrames) frames")
                    }
                    info.frameCount += 1
                    info.delays.append(control.delay)
                    info.durationMs += GIFTiming.displayedMilliseconds(centiseconds: control.delay)
                    control = GraphicControl()
                    try reader.skipImageData()
                }
            } catch let error as FlipbookError where error.code != .limitExceeded {
                if options.strict || info.frameCount == 0 { throw error }
                info.truncated = true
                break scan
            }
        }
        return info
    }
}
