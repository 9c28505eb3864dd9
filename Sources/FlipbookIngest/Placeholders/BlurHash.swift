import Foundation
import Flipbook

/// BlurHash (Wolt's format, as Mastodon's API carries it): a DCT of the image in linear light, quantised
/// into a short base-83 string. The arithmetic follows the reference encoder step for step (the same basis
/// products, sums in the same order, the same rounding), so a string equals what PyPI `blurhash` makes of
/// the same pixels; the tests hold it to that.
public enum BlurHash {
    /// The hash of `image`'s colour channels (alpha is ignored; flatten first) with `x` by `y` components
    /// (1 to 9 each). Costs width x height x x x y multiply-adds: give it a small image (100 px or so).
    public static func encode(_ image: Image, componentsX x: Int = 4, componentsY y: Int = 3) -> String {
        precondition((1...9).contains(x) && (1...9).contains(y), "BlurHash takes 1 to 9 components a side")
        let width = image.width, height = image.height, channels = image.channels
        let linear = (0...255).map { srgbToLinear($0) }
        // cos(pi * i * x / width) for every component and column, cos(pi * j * y / height) likewise: the
        // same values the reference computes inside its loop.
        let cosX = (0..<x).map { i in (0..<width).map { cos(Double.pi * Double(i) * Double($0) / Double(width)) } }
        let cosY = (0..<y).map { j in (0..<height).map { cos(Double.pi * Double(j) * Double($0) / Double(height)) } }
        var components: [(Double, Double, Double)] = []
        var maxAC = 0.0
        image.pixels.withUnsafeBufferPointer { p in
            for j in 0..<y {
                for i in 0..<x {
                    let norm = (i == 0 && j == 0) ? 1.0 : 2.0
                    var r = 0.0, g = 0.0, b = 0.0
                    for py in 0..<height {
                        for px in 0..<width {
                            let basis = norm * cosX[i][px] * cosY[j][py]
                            let o = (py * width + px) * channels
                            r += basis * linear[Int(p[o])]
                            g += basis * linear[Int(p[o + 1])]
                            b += basis * linear[Int(p[o + 2])]
                        }
                    }
                    let scale = Double(width) * Double(height)
                    components.append((r / scale, g / scale, b / scale))
                    if i != 0 || j != 0 { maxAC = max(maxAC, abs(r / scale), abs(g / scale), abs(b / scale)) }
                }
            }
        }
        let dc = components[0]
        let dcValue = (linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2)
        let quantisedMax = Int(max(0, min(82, (maxAC * 166 - 0.5).rounded(.down))))
        let acNorm = Double(quantisedMax + 1) / 166
        func quantise(_ v: Double) -> Int {
            Int(max(0, min(18, (signPow(v / acNorm, 0.5) * 9 + 9.5).rounded(.down))))
        }
        var hash = base83((x - 1) + (y - 1) * 9, length: 1)
        hash += base83(quantisedMax, length: 1)
        hash += base83(dcValue, length: 4)
        for (r, g, b) in components.dropFirst() {
            hash += base83(quantise(r) * 19 * 19 + quantise(g) * 19 + quantise(b), length: 2)
        }
        return hash
    }

    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func base83(_ value: Int, length: Int) -> String {
        var out = ""
        var divisor = 1
        for _ in 1..<max(1, length) { divisor *= 83 }
        for _ in 0..<length {
            out.append(alphabet[(value / divisor) % 83])
            divisor = max(1, divisor / 83)
        }
        return out
    }

    static func srgbToLinear(_ value: Int) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signPow(_ value: Double, _ exponent: Double) -> Double {
        let magnitude = pow(abs(value), exponent)
        return value < 0 ? -magnitude : magnitude
    }
}
