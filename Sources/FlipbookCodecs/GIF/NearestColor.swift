#if canImport(Glibc)
import Glibc
#endif

/// The nearest palette colour of any RGB colour, by squared RGB distance. Answers are cached per cell of
/// 6 bits a channel (256 KB), each found once by a full search, so a frame costs a table lookup a pixel;
/// the cell's centre stands for its 4x4x4 colours, an error of at most 2 levels a channel that the
/// dithering's error feedback absorbs.
package final class NearestColor {
    package let palette: [RGBColor]
    /// r, g, b of each palette entry, as Ints for the search.
    private let channels: [Int]
    private var cache = [Int16](repeating: -1, count: 1 << 18)

    package init(palette: [RGBColor]) {
        precondition(!palette.isEmpty && palette.count <= 256)
        self.palette = palette
        channels = palette.flatMap { [Int($0.r), Int($0.g), Int($0.b)] }
    }

    package func index(_ r: Int, _ g: Int, _ b: Int) -> Int {
        let cell = (r >> 2) << 12 | (g >> 2) << 6 | (b >> 2)
        let cached = cache[cell]
        if cached >= 0 { return Int(cached) }
        let (cr, cg, cb) = ((r & ~3) + 2, (g & ~3) + 2, (b & ~3) + 2)
        let best = channels.withUnsafeBufferPointer { p in
            var best = 0, bestDistance = Int.max
            for k in 0..<(p.count / 3) {
                let dr = cr - p[3 * k], dg = cg - p[3 * k + 1], db = cb - p[3 * k + 2]
                let d = dr * dr + dg * dg + db * db
                if d < bestDistance {
                    bestDistance = d
                    best = k
                }
            }
            return best
        }
        cache[cell] = Int16(best)
        return best
    }
}
