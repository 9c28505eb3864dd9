import Foundation
import Flipbook

/// ThumbHash (Evan Wallace's format, as Immich's API carries it): the aspect ratio, whether there is alpha,
/// the average colour and a few DCT terms of luminance, two chroma channels and alpha, in about 25 bytes.
/// Written from the format's description; the tests decode it with an independent implementation
/// (PyPI `thumbhash-python`) and compare aspect ratio and average colour with the source's.
public enum ThumbHash {
    /// The hash of `image` (at most 100 x 100 pixels: larger costs time and adds nothing).
    public static func encode(_ image: Image) -> [UInt8] {
        let w = image.width, h = image.height, n = w * h, ch = image.channels
        precondition(w > 0 && h > 0 && w <= 100 && h <= 100, "ThumbHash takes at most 100 x 100 pixels")
        // The average colour, weighted by alpha.
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        let px = image.pixels
        for i in 0..<n {
            let o = i * ch
            let alpha = ch == 4 ? Double(px[o + 3]) / 255 : 1
            avgR += alpha / 255 * Double(px[o])
            avgG += alpha / 255 * Double(px[o + 1])
            avgB += alpha / 255 * Double(px[o + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(n)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let longer = Double(max(w, h))
        let lx = max(1, jsRound(lLimit * Double(w) / longer))
        let ly = max(1, jsRound(lLimit * Double(h) / longer))

        // RGBA to LPQA, composited over the average colour.
        var l = [Double](repeating: 0, count: n), p = l, q = l, a = l
        for i in 0..<n {
            let o = i * ch
            let alpha = ch == 4 ? Double(px[o + 3]) / 255 : 1
            let r = avgR * (1 - alpha) + alpha / 255 * Double(px[o])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(px[o + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(px[o + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        // DC and normalised AC terms of one channel, over the triangle of frequencies cx * ny < nx * (ny - cy).
        func channel(_ values: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, scale = 0.0
            var ac: [Double] = []
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    var f = 0.0
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += values[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(n)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lum = channel(l, max(3, lx), max(3, ly))
        let yb = channel(p, 3, 3)
        let rg = channel(q, 3, 3)
        let alphaTerms = hasAlpha ? channel(a, 5, 5) : nil

        let landscape = w > h
        let header24 = jsRound(63 * lum.dc) | (jsRound(31.5 + 31.5 * yb.dc) << 6) | (jsRound(31.5 + 31.5 * rg.dc) << 12)
            | (jsRound(31 * lum.scale) << 18) | ((hasAlpha ? 1 : 0) << 23)
        let header16 = (landscape ? ly : lx) | (jsRound(63 * yb.scale) << 3) | (jsRound(63 * rg.scale) << 9) | ((landscape ? 1 : 0) << 15)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16),
                             UInt8(header16 & 255), UInt8(header16 >> 8)]
        if let alphaTerms { hash.append(UInt8(jsRound(15 * alphaTerms.dc) | (jsRound(15 * alphaTerms.scale) << 4))) }
        let start = hash.count
        var index = 0
        for ac in [lum.ac, yb.ac, rg.ac] + (alphaTerms.map { [$0.ac] } ?? []) {
            for f in ac {
                let slot = start + (index >> 1)
                if slot >= hash.count { hash.append(0) }
                hash[slot] |= UInt8(jsRound(15 * f) << ((index & 1) << 2))
                index += 1
            }
        }
        return hash
    }

    /// JavaScript's Math.round (halves up), which the format's reference encoder uses.
    static func jsRound(_ v: Double) -> Int { Int((v + 0.5).rounded(.down)) }
}
