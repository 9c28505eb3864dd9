/// SSIM of two 8-bit planes, computed as x264 and ffmpeg's `ssim` filter do: sums over 4x4 blocks, then
/// one score per 8x8 window on a 4-pixel grid (overlapping), averaged. Pure integer sums, so the result is
/// the same on every machine: the converter's quality search decides from it and outputs must not depend
/// on where they were made.
package enum PlaneSSIM {
    /// Mean SSIM of `a` and `b` (`width` x `height`, rows `strideA` / `strideB` bytes apart). 1 for planes
    /// under 8 pixels a side (no window fits).
    package static func score(_ a: UnsafePointer<UInt8>, strideA: Int, _ b: UnsafePointer<UInt8>, strideB: Int, width: Int, height: Int) -> Double {
        let bw = width / 4, bh = height / 4
        guard bw >= 2, bh >= 2 else { return 1 }
        // Per 4x4 block: sum a, sum b, sum a^2 + b^2, sum a*b, for two block rows at a time.
        var previous = [Int32](repeating: 0, count: bw * 4), current = [Int32](repeating: 0, count: bw * 4)
        var total = 0.0
        func sums(_ row: Int, into out: inout [Int32]) {
            for bx in 0..<bw {
                var s1: Int32 = 0, s2: Int32 = 0, ss: Int32 = 0, s12: Int32 = 0
                for y in (row * 4)..<(row * 4 + 4) {
                    let pa = a + y * strideA + bx * 4, pb = b + y * strideB + bx * 4
                    for x in 0..<4 {
                        let va = Int32(pa[x]), vb = Int32(pb[x])
                        s1 += va; s2 += vb; ss += va * va + vb * vb; s12 += va * vb
                    }
                }
                out[bx * 4] = s1; out[bx * 4 + 1] = s2; out[bx * 4 + 2] = ss; out[bx * 4 + 3] = s12
            }
        }
        sums(0, into: &previous)
        for row in 1..<bh {
            sums(row, into: &current)
            for bx in 0..<(bw - 1) {
                let p = bx * 4, q = p + 4
                let f1 = Int64(previous[p]) + Int64(previous[q]) + Int64(current[p]) + Int64(current[q])
                let f2 = Int64(previous[p + 1]) + Int64(previous[q + 1]) + Int64(current[p + 1]) + Int64(current[q + 1])
                let fss = Int64(previous[p + 2]) + Int64(previous[q + 2]) + Int64(current[p + 2]) + Int64(current[q + 2])
                let f12 = Int64(previous[p + 3]) + Int64(previous[q + 3]) + Int64(current[p + 3]) + Int64(current[q + 3])
                total += window(s1: f1, s2: f2, ss: fss, s12: f12)
            }
            swap(&previous, &current)
        }
        return total / Double((bw - 1) * (bh - 1))
    }

    /// x264's ssim_end1 for 64 pixels.
    package static func window(s1: Int64, s2: Int64, ss: Int64, s12: Int64) -> Double {
        let c1 = 0.01 * 0.01 * 255 * 255 * 64, c2 = 0.03 * 0.03 * 255 * 255 * 64 * 63
        let (d1, d2) = (Double(s1), Double(s2))
        let vars = Double(ss * 64 - s1 * s1 - s2 * s2), covar = Double(s12 * 64 - s1 * s2)
        return (2 * d1 * d2 + c1) * (2 * covar + c2) / ((d1 * d1 + d2 * d2 + c1) * (vars + c2))
    }
}
