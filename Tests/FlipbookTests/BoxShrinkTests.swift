import CFFmpeg
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The box shrinks divide by multiplying with a reciprocal (`RoundedDivider`). Checked against plain
/// integer division, and the planar shrink against a direct block mean written out here, on odd sizes
/// where every edge rule applies.
@Suite(.offPool) struct BoxShrinkTests {
    @Test func roundedDividerMatchesIntegerDivision() {
        var generator = SystemRandomNumberGenerator()
        var divisors = Array(1...1024) + [4095, 4096, 4097, 9 * 9 * 128, 16383, 16384, 65535, 65536]
        for _ in 0..<2000 { divisors.append(Int.random(in: 1...65536, using: &generator)) }
        for n in divisors {
            let divider = RoundedDivider(n)
            var numerators: [UInt32] = [0, 1, UInt32.max - UInt32(n / 2)]
            // Around every rounding boundary of a few quotients, low and high.
            for q in [0, 1, 2, 255, 65535, Int(UInt32.max) / n - 1] where q >= 0 {
                let boundary = q * n + (n + 1) / 2  // the smallest t that rounds up to q + 1
                for t in (boundary - 2)...(boundary + 1) where t >= 0 && t + n / 2 <= Int(UInt32.max) {
                    numerators.append(UInt32(t))
                }
            }
            for _ in 0..<64 { numerators.append(UInt32.random(in: 0...(UInt32.max - UInt32(n / 2)), using: &generator)) }
            for t in numerators {
                let expected = (UInt64(t) + UInt64(n / 2)) / UInt64(n)
                #expect(UInt64(divider.divide(t)) == expected, "\(t) / \(n)")
            }
        }
    }

    /// `FrameShrinker.shrink` on 8-bit 4:2:0 and 10-bit 4:2:2 frames of random samples, every factor
    /// from 2 to 9 and sizes that leave partial blocks at the right and bottom.
    @Test(arguments: [(AV_PIX_FMT_YUV420P, 255), (AV_PIX_FMT_YUV422P10LE, 1023)])
    func planarShrinkIsTheBlockMean(format: AVPixelFormat, maximum: Int) throws {
        let av = try LibAV.api()
        for (width, height) in [(101, 67), (64, 48), (17, 9)] {
            let frame = try Frame()
            frame.pointer.pointee.format = format.rawValue
            frame.pointer.pointee.width = Int32(width)
            frame.pointer.pointee.height = Int32(height)
            #expect(av.av_frame_get_buffer(frame.pointer, 0) >= 0)
            let wide = maximum > 255
            let chromaWidth = (width + 1) / 2, chromaHeight = format == AV_PIX_FMT_YUV420P ? (height + 1) / 2 : height
            let planes = [(width, height), (chromaWidth, chromaHeight), (chromaWidth, chromaHeight)]
            var written: [[Int]] = []
            for (p, (w, h)) in planes.enumerated() {
                var samples: [Int] = []
                let (data, lines) = SwsScaler.planes(of: frame.pointer)
                let base = data[p]!, stride = Int(lines[p])
                for y in 0..<h {
                    for x in 0..<w {
                        let v = Int.random(in: 0...maximum)
                        samples.append(v)
                        if wide {
                            (base + y * stride).withMemoryRebound(to: UInt16.self, capacity: w) { $0[x] = UInt16(v) }
                        } else {
                            base[y * stride + x] = UInt8(v)
                        }
                    }
                }
                written.append(samples)
            }
            for k in 2...9 {
                let out = try Frame()
                #expect(try FrameShrinker.shrink(frame.pointer, by: k, into: out))
                #expect(Int(out.pointer.pointee.width) == (width + k - 1) / k)
                #expect(Int(out.pointer.pointee.height) == (height + k - 1) / k)
                let ow = Int(out.pointer.pointee.width), oh = Int(out.pointer.pointee.height)
                let chroma = ((ow + 1) / 2, format == AV_PIX_FMT_YUV420P ? (oh + 1) / 2 : oh)
                let (data, lines) = SwsScaler.planes(of: out.pointer)
                for (p, (w, h)) in planes.enumerated() {
                    let (outW, outH) = p == 0 ? (ow, oh) : chroma
                    let base = data[p]!, stride = Int(lines[p])
                    var mismatches = 0
                    for oy in 0..<outH {
                        for ox in 0..<outW {
                            // A block past the edge (the chroma size rounded up) repeats the last one.
                            let x0 = min(ox * k, w - 1), y0 = min(oy * k, h - 1)
                            let x1 = min(x0 + k, w), y1 = min(y0 + k, h)
                            var total = 0
                            for y in y0..<y1 { for x in x0..<x1 { total += written[p][y * w + x] } }
                            let n = (x1 - x0) * (y1 - y0)
                            let expected = (total + n / 2) / n
                            let actual = wide ? Int((base + oy * stride).withMemoryRebound(to: UInt16.self, capacity: outW) { $0[ox] })
                                              : Int(base[oy * stride + ox])
                            if actual != expected { mismatches += 1 }
                        }
                    }
                    #expect(mismatches == 0, "\(width)x\(height) factor \(k) plane \(p)")
                }
            }
        }
    }
}
