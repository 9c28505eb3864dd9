/// Whole-factor box shrinking of a decoder's own 8-bit interleaved plane, straight into a small `Image`:
/// libvips's shrink before the final Lanczos reduce, and no full-size copy of the plane on our side.
package enum BoxShrink {
    /// Averages `k` x `k` blocks of `src` (RGB or RGBA with straight alpha, `stride` bytes per row). RGBA
    /// colour is alpha-weighted so transparent pixels do not darken edges. Edge blocks average what they
    /// cover. Cost: the output plus one UInt32 accumulator row.
    package static func plane(_ src: UnsafePointer<UInt8>, stride: Int, width w: Int, height h: Int, channels c: Int, factor k: Int) -> Image {
        let outW = (w + k - 1) / k, outH = (h + k - 1) / k
        var out = [UInt8](repeating: 0, count: outW * outH * c)
        var acc = [UInt32](repeating: 0, count: outW * c)
        out.withUnsafeMutableBufferPointer { dst in
            acc.withUnsafeMutableBufferPointer { acc in
                for oy in 0..<outH {
                    acc.update(repeating: 0)
                    let rows = min(k, h - oy * k)
                    for y in (oy * k)..<(oy * k + rows) {
                        let line = src + y * stride
                        var x = 0, o = 0
                        while x < w {
                            let end = min(w, x + k)
                            if c == 3 {
                                while x < end {
                                    acc[o] &+= UInt32(line[3 * x]); acc[o + 1] &+= UInt32(line[3 * x + 1])
                                    acc[o + 2] &+= UInt32(line[3 * x + 2])
                                    x += 1
                                }
                            } else {
                                while x < end {
                                    let a = UInt32(line[4 * x + 3])
                                    acc[o] &+= UInt32(line[4 * x]) &* a; acc[o + 1] &+= UInt32(line[4 * x + 1]) &* a
                                    acc[o + 2] &+= UInt32(line[4 * x + 2]) &* a; acc[o + 3] &+= a
                                    x += 1
                                }
                            }
                            o += c
                        }
                    }
                    let row = dst.baseAddress! + oy * outW * c
                    let whole = RoundedDivider(k * rows)
                    for ox in 0..<outW {
                        let cols = min(k, w - ox * k), o = ox * c
                        let mean = cols == k ? whole : RoundedDivider(cols * rows)
                        if c == 3 {
                            for i in 0..<3 { row[o + i] = UInt8(truncatingIfNeeded: mean.divide(acc[o + i])) }
                        } else {
                            let a = acc[o + 3]
                            for i in 0..<3 { row[o + i] = a == 0 ? 0 : UInt8(min(255, (acc[o + i] + a / 2) / a)) }
                            row[o + 3] = UInt8(truncatingIfNeeded: mean.divide(a))
                        }
                    }
                }
            }
        }
        return Image(width: outW, height: outH, channels: c, pixels: out)
    }
}
