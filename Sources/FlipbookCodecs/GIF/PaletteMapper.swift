#if canImport(Glibc)
import Glibc
#endif

/// Turns RGB frames into palette indexes, frame after frame, against what the GIF already shows.
///
/// A pixel whose source colour is within `stillTolerance` of the source colour it had when last drawn
/// is left as it is (transparent in this frame): the GIF then stores only what moved, and still areas
/// do not shimmer as error diffusion's pattern shifts. Comparing with the colour at the last *draw*, not
/// the previous frame, keeps slow fades from drifting further than the tolerance.
package struct PaletteMapper {
    package let width: Int, height: Int
    package let dither: GIFDither
    package let transparentIndex: UInt8
    /// Largest per-channel change (0-255) of a pixel's source that still leaves it as it is.
    package let stillTolerance: Int
    private let nearest: NearestColor
    /// The source colour (RGB) each pixel was last drawn for.
    private var drawnFrom: [UInt8]
    private var isFirst = true

    package init(width: Int, height: Int, palette: [RGBColor], transparentIndex: UInt8, dither: GIFDither, stillTolerance: Int) {
        self.width = width
        self.height = height
        self.dither = dither
        self.transparentIndex = transparentIndex
        self.stillTolerance = stillTolerance
        precondition(palette.count <= Int(transparentIndex), "the transparent index must not be a colour")
        nearest = NearestColor(palette: palette)
        orderedAmplitude = Int((8 * cbrt(255 / Double(palette.count))).rounded())
        drawnFrom = [UInt8](repeating: 0, count: width * height * 3)
    }

    /// 8x8 Bayer matrix: thresholds 0-63 spread so that every 2x2, 4x4 and 8x8 block covers the range evenly.
    private static let bayer: [Int] = {
        var m = [0]
        var n = 1
        while n < 8 {
            var next = [Int](repeating: 0, count: 4 * n * n)
            for y in 0..<n {
                for x in 0..<n {
                    let v = 4 * m[y * n + x]
                    next[y * 2 * n + x] = v
                    next[y * 2 * n + x + n] = v + 2
                    next[(y + n) * 2 * n + x] = v + 3
                    next[(y + n) * 2 * n + x + n] = v + 1
                }
            }
            m = next
            n *= 2
        }
        return m
    }()

    /// Ordered dithering's span (offsets run over +-half of it). The gap between neighbouring palette
    /// colours grows as the cube root of 1/colours, and so does the span: 8 levels at 255 colours, 21 at 15.
    /// Mean error after an 8x8 blur (what the eye averages) at 255 colours, on a moving gradient, a phone
    /// clip and testsrc2: span 8: 0.65, 0.85, 0.38; 12: 0.67, 0.88, 0.77; 24: 0.75, 1.33, 1.86. At 15
    /// colours the gradient wants more (8: 1.04, 24: 0.86) and the phone clip less (8: 2.45, 24: 3.05).
    private let orderedAmplitude: Int

    /// Maps one packed RGB frame (width x height); nil if no pixel needs drawing (the frame the GIF
    /// already shows is good enough: the caller lengthens it instead).
    package mutating func map(_ rgb: UnsafeBufferPointer<UInt8>) -> MappedFrame? {
        precondition(rgb.count >= width * height * 3)
        // Index per pixel for this frame, or the transparent index where the pixel stays.
        var out = [UInt8](repeating: transparentIndex, count: width * height)
        var minX = width, minY = height, maxX = -1, maxY = -1
        // Floyd-Steinberg error, in 1/16 levels, for this row and the next (one pixel of margin each side);
        // the rows take turns.
        let rowLength = (width + 2) * 3
        var errors = [Int](repeating: 0, count: 2 * rowLength)
        let bayer = Self.bayer, amplitude = orderedAmplitude
        let first = isFirst
        let tolerance = stillTolerance
        let nearest = self.nearest, palette = nearest.palette, dither = self.dither
        let width = self.width, height = self.height
        var drawn: [UInt8] = []
        swap(&drawn, &drawnFrom)  // worked on as a local, so the closures below need no access to self
        defer { swap(&drawn, &drawnFrom) }

        out.withUnsafeMutableBufferPointer { out in
        drawn.withUnsafeMutableBufferPointer { drawnFrom in
        errors.withUnsafeMutableBufferPointer { errors in
        palette.withUnsafeBufferPointer { palette in
            for y in 0..<height {
                let leftToRight = y & 1 == 0
                let errorRow = errors.baseAddress! + (y & 1) * rowLength
                let nextErrorRow = errors.baseAddress! + (1 - (y & 1)) * rowLength
                for step in 0..<width {
                    let x = leftToRight ? step : width - 1 - step
                    let i = y * width + x
                    let r = Int(rgb[3 * i]), g = Int(rgb[3 * i + 1]), b = Int(rgb[3 * i + 2])
                    let e = 3 * (x + 1)
                    let (dr, dg, db) = (r - Int(drawnFrom[3 * i]), g - Int(drawnFrom[3 * i + 1]), b - Int(drawnFrom[3 * i + 2]))
                    if !first, dr <= tolerance, dr >= -tolerance, dg <= tolerance, dg >= -tolerance, db <= tolerance, db >= -tolerance {
                        // Left as shown; error arriving here is dropped, none leaves.
                        errorRow[e] = 0; errorRow[e + 1] = 0; errorRow[e + 2] = 0
                        continue
                    }
                    var (wr, wg, wb) = (r, g, b)
                    switch dither {
                    case .none: break
                    case .ordered:
                        let offset = (bayer[(y & 7) * 8 + (x & 7)] * 2 - 63) * amplitude / 128
                        (wr, wg, wb) = (r + offset, g + offset, b + offset)
                    case .floydSteinberg:
                        (wr, wg, wb) = (r + errorRow[e] / 16, g + errorRow[e + 1] / 16, b + errorRow[e + 2] / 16)
                    }
                    wr = min(255, max(0, wr)); wg = min(255, max(0, wg)); wb = min(255, max(0, wb))
                    let k = nearest.index(wr, wg, wb)
                    if dither == .floydSteinberg {
                        let p = palette[k]
                        let (er, eg, eb) = (wr - Int(p.r), wg - Int(p.g), wb - Int(p.b))
                        // 7/16 ahead, 3/16 behind below, 5/16 below, 1/16 ahead below ("ahead" follows the scan).
                        let ahead = leftToRight ? e + 3 : e - 3, behind = leftToRight ? e - 3 : e + 3
                        errorRow[ahead] += 7 * er; errorRow[ahead + 1] += 7 * eg; errorRow[ahead + 2] += 7 * eb
                        nextErrorRow[behind] += 3 * er; nextErrorRow[behind + 1] += 3 * eg; nextErrorRow[behind + 2] += 3 * eb
                        nextErrorRow[e] += 5 * er; nextErrorRow[e + 1] += 5 * eg; nextErrorRow[e + 2] += 5 * eb
                        nextErrorRow[ahead] += er; nextErrorRow[ahead + 1] += eg; nextErrorRow[ahead + 2] += eb
                    }
                    out[i] = UInt8(k)
                    drawnFrom[3 * i] = UInt8(r); drawnFrom[3 * i + 1] = UInt8(g); drawnFrom[3 * i + 2] = UInt8(b)
                    minX = min(minX, x); maxX = max(maxX, x)
                    minY = min(minY, y); maxY = max(maxY, y)
                }
                errorRow.update(repeating: 0, count: rowLength)  // it becomes the row after next
            }
        }
        }
        }
        }
        isFirst = false
        guard maxX >= 0 else { return nil }
        let w = maxX - minX + 1, h = maxY - minY + 1
        var indexes = [UInt8](repeating: 0, count: w * h)
        var usesTransparency = false
        for row in 0..<h {
            for col in 0..<w {
                let v = out[(minY + row) * width + minX + col]
                if v == transparentIndex { usesTransparency = true }
                indexes[row * w + col] = v
            }
        }
        return MappedFrame(x: minX, y: minY, width: w, height: h, indexes: indexes, usesTransparency: usesTransparency)
    }
}
