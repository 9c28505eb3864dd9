import CFFmpeg

/// Box-averages a decoded frame's planes by an integer factor before the Lanczos scale: vips's
/// "shrink, then reduce". swscale's cost grows with the scale factor (Lanczos-3 at 30x reads ~180 taps a
/// pixel; an 8K frame to 256 px took ~60 ms), while a box shrink reads each source sample once.
/// The factor leaves at least 2x for Lanczos, so the result is anti-aliased the same way.
package enum FrameShrinker {
    /// The box factor for a frame `width` x `height` scaled to `scaledWidth` x `scaledHeight`: the whole
    /// part of half the smaller axis's reduction; 1 means no shrink.
    package static func factor(width: Int, height: Int, scaledWidth: Int, scaledHeight: Int) -> Int {
        guard scaledWidth > 0, scaledHeight > 0 else { return 1 }
        let reduction = min(Double(width) / Double(scaledWidth), Double(height) / Double(scaledHeight))
        return min(128, max(1, Int(reduction / 2)))  // 128: a 16-bit block sum still fits in 32 bits
    }

    /// Shrinks `frame`'s pixels by `factor` into `out` (same pixel format, size rounded up; the colour
    /// description and aspect stay on `frame`, where the renderer reads them). Returns false, leaving
    /// `out` untouched, for layouts this does not handle (packed, palette, bitstream, big-endian or hardware
    /// formats): the caller then scales the frame as it is.
    package static func shrink(_ frame: UnsafeMutablePointer<AVFrame>, by factor: Int, into out: Frame) throws -> Bool {
        let av = try LibAV.api()
        guard factor > 1, let layout = PlanarLayout(frame.pointee.format) else { return false }

        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        av.av_frame_unref(out.pointer)
        out.pointer.pointee.format = frame.pointee.format
        out.pointer.pointee.width = Int32((w + factor - 1) / factor)
        out.pointer.pointee.height = Int32((h + factor - 1) / factor)
        try LibAV.check(av.av_frame_get_buffer(out.pointer, 0), "allocating a shrunk frame")

        let (source, sourceLines) = SwsScaler.planes(of: frame)
        let (target, targetLines) = SwsScaler.planes(of: out.pointer)
        for p in 0..<layout.planes {
            let (inW, inH) = layout.planeSize(p, width: w, height: h)
            let (outW, outH) = layout.planeSize(p, width: Int(out.pointer.pointee.width), height: Int(out.pointer.pointee.height))
            guard let src = source[p], let dst = target[p] else { return false }
            let geometry = PlaneGeometry(inWidth: inW, inHeight: inH, inStride: Int(sourceLines[p]),
                                         outWidth: outW, outHeight: outH, outStride: Int(targetLines[p]), factor: factor)
            if layout.step == 1 {
                boxAverage(src, dst, geometry)
            } else {
                src.withMemoryRebound(to: UInt16.self, capacity: 1) { s in
                    dst.withMemoryRebound(to: UInt16.self, capacity: 1) { boxAverage(s, $0, geometry) }
                }
            }
        }
        return true
    }

    package struct PlaneGeometry {
        package var inWidth, inHeight, inStride: Int  // stride in bytes
        package var outWidth, outHeight, outStride: Int
        package var factor: Int
    }

    /// Each output sample is the rounded mean of its factor x factor block (fewer at the right and bottom
    /// edges; a block past the edge, from rounding the chroma size up, repeats the last one).
    private static func boxAverage(_ src: UnsafeMutablePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, _ g: PlaneGeometry) {
        // 8-bit samples sum in 16 bits (at most 128 rows x 255), twice the lanes of a 32-bit sum.
        boxAverage(src, dst, g, sum: UInt16.self)
    }

    private static func boxAverage(_ src: UnsafeMutablePointer<UInt16>, _ dst: UnsafeMutablePointer<UInt16>, _ g: PlaneGeometry) {
        boxAverage(src, dst, g, sum: UInt32.self)
    }

    /// Two passes per output row: `k` input rows summed into one row of column sums (vectorised), then
    /// each run of `k` column sums added up and divided by a `RoundedDivider`.
    @inline(__always)
    private static func boxAverage<Sample: FixedWidthInteger & UnsignedInteger, Sum: FixedWidthInteger & UnsignedInteger>(
        _ src: UnsafeMutablePointer<Sample>, _ dst: UnsafeMutablePointer<Sample>, _ g: PlaneGeometry, sum: Sum.Type
    ) {
        let k = g.factor, width = g.inWidth
        let inStride = g.inStride / MemoryLayout<Sample>.stride, outStride = g.outStride / MemoryLayout<Sample>.stride
        let sums = UnsafeMutablePointer<Sum>.allocate(capacity: width)
        defer { sums.deallocate() }
        let wholeBlocks = min(width / k, g.outWidth)
        for oy in 0..<g.outHeight {
            let y0 = min(oy * k, g.inHeight - 1), y1 = min(y0 + k, g.inHeight), rows = y1 - y0
            let first = src + y0 * inStride
            for x in 0..<width { sums[x] = Sum(truncatingIfNeeded: first[x]) }
            for y in (y0 + 1)..<y1 {
                let row = src + y * inStride
                for x in 0..<width { sums[x] &+= Sum(truncatingIfNeeded: row[x]) }
            }
            let out = dst + oy * outStride
            let whole = RoundedDivider(k * rows)
            var x = 0
            for ox in 0..<wholeBlocks {
                var total: UInt32 = 0
                for i in 0..<k { total &+= UInt32(truncatingIfNeeded: sums[x &+ i]) }
                out[ox] = Sample(truncatingIfNeeded: whole.divide(total))
                x &+= k
            }
            for ox in wholeBlocks..<g.outWidth {
                let x0 = min(ox * k, width - 1), x1 = min(x0 + k, width)
                var total: UInt32 = 0
                for x in x0..<x1 { total &+= UInt32(truncatingIfNeeded: sums[x]) }
                out[ox] = Sample(truncatingIfNeeded: RoundedDivider((x1 - x0) * rows).divide(total))
            }
        }
    }
}
