import CHeif

/// A HEIF image as libheif decodes it when asked for no particular layout, box-shrunk by a whole factor:
/// planar RGB 4:4:4 (libheif 1.15 converts every decoded colour image to that internally, whatever the
/// caller asks for) or monochrome, 8 to 16 bits, optional alpha. Asking libheif for interleaved RGB instead
/// costs a second full-size buffer next to the planar one (36 MB for 12 MP, 72 MB at 10 bits for PQ/HLG).
package struct HEIFPlanes {
    /// The shrunk image: RGB in [0, 1] (non-linear) and alpha in [0, 1] when there is alpha.
    package var width: Int
    package var height: Int
    package var rgb: [Float]
    package var alpha: [Float]?

    /// One plane of a decoded image, read in place.
    package struct Plane {
        package let base: UnsafePointer<UInt8>
        package let stride: Int, width: Int, height: Int, bits: Int

        package init?(_ image: OpaquePointer, _ channel: heif_channel) {
            guard heif_image_has_channel(image, channel) != 0 else { return nil }
            var s: Int32 = 0
            guard let p = heif_image_get_plane_readonly(image, channel, &s) else { return nil }
            base = p
            stride = Int(s)
            width = Int(heif_image_get_width(image, channel))
            height = Int(heif_image_get_height(image, channel))
            bits = Int(heif_image_get_bits_per_pixel_range(image, channel))
            guard width > 0, height > 0, (1...16).contains(bits), stride >= width * (bits > 8 ? 2 : 1) else { return nil }
        }

        /// Sample (x, y) as an integer; 9- to 16-bit planes hold native-endian UInt16s.
        @inline(__always) package func sample(_ x: Int, _ y: Int) -> Int {
            bits > 8 ? Int(UnsafeRawPointer(base + y * stride).load(fromByteOffset: 2 * x, as: UInt16.self)) : Int(base[y * stride + x])
        }

        package var maxValue: Float { Float((1 << bits) - 1) }
    }

    /// Shrinks `image` (from `heif_decode_image` with `heif_colorspace_undefined`) by `k`, or returns nil
    /// for a layout this file does not handle (the caller then asks libheif for interleaved RGB).
    /// `fullRange` applies to monochrome luma (libheif converts colour images to full-range RGB itself).
    /// `premultiplied` colour is averaged as it is and divided by alpha afterwards; straight colour is
    /// weighted by alpha.
    package static func shrink(_ image: OpaquePointer, factor k: Int, fullRange: Bool, premultiplied: Bool) -> HEIFPlanes? {
        let colourspace = heif_image_get_colorspace(image), chroma = heif_image_get_chroma_format(image)
        let channels: [heif_channel]
        if colourspace == heif_colorspace_RGB, chroma == heif_chroma_444 {
            channels = [heif_channel_R, heif_channel_G, heif_channel_B]
        } else if colourspace == heif_colorspace_monochrome, chroma == heif_chroma_monochrome {
            channels = [heif_channel_Y]
        } else {
            return nil
        }
        let planes = channels.compactMap { Plane(image, $0) }
        let alpha = Plane(image, heif_channel_Alpha)
        guard planes.count == channels.count, let first = planes.first,
              planes.allSatisfy({ $0.width == first.width && $0.height == first.height }),
              alpha.map({ $0.width == first.width && $0.height == first.height }) ?? true else { return nil }
        let w = first.width, h = first.height, outW = (w + k - 1) / k, outH = (h + k - 1) / k
        var out = HEIFPlanes(width: outW, height: outH, rgb: [Float](repeating: 0, count: outW * outH * 3),
                             alpha: alpha == nil ? nil : [Float](repeating: 0, count: outW * outH))
        let weighted = alpha != nil && !premultiplied
        // Sums per output column and plane (alpha-weighted when `weighted`), their weights, and alpha.
        var sums = [Double](repeating: 0, count: outW * planes.count), weights = [Double](repeating: 0, count: outW)
        var alphas = weights
        for oy in 0..<outH {
            for i in sums.indices { sums[i] = 0 }
            for i in 0..<outW { weights[i] = 0; alphas[i] = 0 }
            let y0 = oy * k, y1 = min(h, y0 + k)
            for row in y0..<y1 {
                for ox in 0..<outW {
                    var accW = 0, accA = 0
                    var acc = (0, 0, 0)
                    for x in (ox * k)..<min(w, ox * k + k) {
                        let a = alpha?.sample(x, row) ?? 1, wgt = weighted ? a : 1
                        acc.0 += planes[0].sample(x, row) * wgt
                        if planes.count == 3 {
                            acc.1 += planes[1].sample(x, row) * wgt
                            acc.2 += planes[2].sample(x, row) * wgt
                        }
                        accW += wgt
                        accA += a
                    }
                    sums[ox * planes.count] += Double(acc.0)
                    if planes.count == 3 { sums[ox * 3 + 1] += Double(acc.1); sums[ox * 3 + 2] += Double(acc.2) }
                    weights[ox] += Double(accW); alphas[ox] += Double(accA)
                }
            }
            for ox in 0..<outW {
                let o = oy * outW + ox
                var rgb = (0 as Float, 0 as Float, 0 as Float)
                if weights[ox] > 0 {
                    if planes.count == 3 {
                        rgb = (Float(sums[ox * 3] / weights[ox]) / planes[0].maxValue, Float(sums[ox * 3 + 1] / weights[ox]) / planes[1].maxValue,
                               Float(sums[ox * 3 + 2] / weights[ox]) / planes[2].maxValue)
                    } else {
                        let l = luma(Float(sums[ox] / weights[ox]), bits: first.bits, full: fullRange)
                        rgb = (l, l, l)
                    }
                }
                if let alpha {
                    let n = Double(min(k, w - ox * k) * (y1 - y0))
                    let a = Float(alphas[ox] / n) / alpha.maxValue
                    out.alpha![o] = a
                    if premultiplied, a > 0 { rgb = (rgb.0 / a, rgb.1 / a, rgb.2 / a) }
                }
                out.rgb[3 * o] = rgb.0; out.rgb[3 * o + 1] = rgb.1; out.rgb[3 * o + 2] = rgb.2
            }
        }
        return out
    }

    /// A luma code value to [0, 1], full range or limited (16-235 scaled to the bit depth).
    package static func luma(_ v: Float, bits: Int, full: Bool) -> Float {
        let scale = Float(1 << (bits - 8))
        return full ? v / Float((1 << bits) - 1) : (v - 16 * scale) / (219 * scale)
    }

    /// 8-bit RGB or RGBA (straight alpha), clipped and rounded.
    package func image8() -> Image {
        let c = alpha == nil ? 3 : 4
        var pixels = [UInt8](repeating: 0, count: width * height * c)
        for i in 0..<(width * height) {
            for j in 0..<3 { pixels[i * c + j] = UInt8(min(255, max(0, rgb[3 * i + j] * 255).rounded())) }
            if let alpha { pixels[i * 4 + 3] = UInt8(min(255, max(0, alpha[i] * 255).rounded())) }
        }
        return Image(width: width, height: height, channels: c, pixels: pixels)
    }

    /// 16-bit RGB (full range), what `ToneMapper.map` reads.
    package func rgb16() -> [UInt16] {
        rgb.map { UInt16(min(65535, max(0, $0 * 65535).rounded())) }
    }
}
