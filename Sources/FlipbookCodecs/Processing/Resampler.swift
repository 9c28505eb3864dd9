/// A separable Lanczos-3 resampler for 8-bit RGB/RGBA, the filter libvips and Pillow use for thumbnails.
/// When shrinking, the kernel widens by the shrink factor, so every source pixel contributes (area
/// weighting), and alpha is premultiplied while filtering so transparent pixels do not darken edges.
/// Cost: one float buffer of outputWidth x sourceRows x channels, plus the output.
package enum Resampler {
    /// Resamples the region `(x, y, width, height)` of `image` (fractional source pixels) to `size`.
    package static func resample(
        _ image: Image, region: (x: Double, y: Double, width: Double, height: Double), to size: Size
    ) -> Image {
        let c = image.channels
        let outW = max(1, size.width), outH = max(1, size.height)
        let hTaps = Taps(sourceLength: image.width, start: region.x, length: region.width, outputLength: outW)
        let vTaps = Taps(sourceLength: image.height, start: region.y, length: region.height, outputLength: outH)
        let rowLow = vTaps.firstSource, rowHigh = vTaps.lastSource
        let rows = rowHigh - rowLow + 1

        // Horizontal pass over only the rows the vertical pass will read.
        var temp = [Float](repeating: 0, count: outW * rows * c)
        image.pixels.withUnsafeBufferPointer { src in
            temp.withUnsafeMutableBufferPointer { tmp in
                var premultiplied = [Float](repeating: 0, count: image.width * c)
                premultiplied.withUnsafeMutableBufferPointer { line in
                    for row in 0..<rows {
                        let base = (row + rowLow) * image.width * c
                        if c == 4 {
                            for x in 0..<image.width {
                                let a = Float(src[base + x * 4 + 3]) / 255
                                line[x * 4] = Float(src[base + x * 4]) * a
                                line[x * 4 + 1] = Float(src[base + x * 4 + 1]) * a
                                line[x * 4 + 2] = Float(src[base + x * 4 + 2]) * a
                                line[x * 4 + 3] = Float(src[base + x * 4 + 3])
                            }
                        } else {
                            for i in 0..<(image.width * c) { line[i] = Float(src[base + i]) }
                        }
                        let outBase = row * outW * c
                        hTaps.weights.withUnsafeBufferPointer { weights in
                            for x in 0..<outW {
                                let first = hTaps.first[x], count = hTaps.count[x], w0 = hTaps.offset[x]
                                // All channels of a tap in one pass: one weight load, contiguous reads.
                                var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
                                var p = first * c
                                if c == 4 {
                                    for t in 0..<count {
                                        let w = weights[w0 + t]
                                        s0 += line[p] * w; s1 += line[p + 1] * w; s2 += line[p + 2] * w; s3 += line[p + 3] * w
                                        p += 4
                                    }
                                    tmp[outBase + x * 4 + 3] = s3
                                } else {
                                    for t in 0..<count {
                                        let w = weights[w0 + t]
                                        s0 += line[p] * w; s1 += line[p + 1] * w; s2 += line[p + 2] * w
                                        p += 3
                                    }
                                }
                                tmp[outBase + x * c] = s0
                                tmp[outBase + x * c + 1] = s1
                                tmp[outBase + x * c + 2] = s2
                            }
                        }
                    }
                }
            }
        }

        // Vertical pass.
        var out = [UInt8](repeating: 0, count: outW * outH * c)
        temp.withUnsafeBufferPointer { tmp in
            out.withUnsafeMutableBufferPointer { dst in
                var acc = [Float](repeating: 0, count: outW * c)
                acc.withUnsafeMutableBufferPointer { acc in
                    for y in 0..<outH {
                        for i in 0..<acc.count { acc[i] = 0 }
                        let first = vTaps.first[y] - rowLow, w0 = vTaps.offset[y]
                        for t in 0..<vTaps.count[y] {
                            let weight = vTaps.weights[w0 + t]
                            let rowBase = (first + t) * outW * c
                            for i in 0..<acc.count { acc[i] += tmp[rowBase + i] * weight }
                        }
                        let outBase = y * outW * c
                        if c == 4 {
                            for x in 0..<outW {
                                let a = min(max(acc[x * 4 + 3], 0), 255)
                                let scale: Float = a > 0 ? 255 / a : 0
                                for k in 0..<3 { dst[outBase + x * 4 + k] = clampByte(acc[x * 4 + k] * scale) }
                                dst[outBase + x * 4 + 3] = clampByte(a)
                            }
                        } else {
                            for i in 0..<acc.count { dst[outBase + i] = clampByte(acc[i]) }
                        }
                    }
                }
            }
        }
        return Image(width: outW, height: outH, channels: c, pixels: out)
    }

    @inline(__always)
    package static func clampByte(_ v: Float) -> UInt8 {
        UInt8(min(max(v + 0.5, 0), 255))
    }

    package static func lanczos3(_ x: Double) -> Double {
        let x = abs(x)
        if x < 1e-9 { return 1 }
        if x >= 3 { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Precomputed, normalised filter taps for one axis.
    package struct Taps {
        package var first: [Int] = []
        package var count: [Int] = []
        package var offset: [Int] = []
        package var weights: [Float] = []
        package var firstSource = Int.max
        package var lastSource = 0

        package init(sourceLength: Int, start: Double, length: Double, outputLength: Int) {
            let step = length / Double(outputLength)
            let filterScale = max(1, step)
            let support = 3 * filterScale
            for i in 0..<outputLength {
                let center = start + (Double(i) + 0.5) * step
                // Clamped so that no region, however far off the image, reads outside it.
                let last = max(0, sourceLength - 1)
                let lo = min(last, max(0, Int((center - support).rounded(.down))))
                let hi = max(lo, min(last, Int((center + support).rounded(.up))))
                var ws: [Double] = []
                var total = 0.0
                for s in lo...max(lo, hi) {
                    let w = Resampler.lanczos3((Double(s) + 0.5 - center) / filterScale)
                    ws.append(w)
                    total += w
                }
                // Trim zero-weight ends so the inner loops stay short.
                var a = 0, b = ws.count - 1
                while a < b, ws[a] == 0 { a += 1 }
                while b > a, ws[b] == 0 { b -= 1 }
                first.append(lo + a)
                count.append(b - a + 1)
                offset.append(weights.count)
                let norm = total != 0 ? total : 1
                for k in a...b { weights.append(Float(ws[k] / norm)) }
                firstSource = min(firstSource, lo + a)
                lastSource = max(lastSource, lo + b)
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
