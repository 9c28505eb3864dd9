import CHeif

/// A HEIF image's native planes (YCbCr 4:2:0/4:2:2/4:4:4 or monochrome, 8 to 16 bits, optional alpha)
/// box-shrunk by a whole factor and only then converted to RGB. Asking libheif for interleaved RGB instead
/// costs a full-size RGB(A) buffer next to its YCbCr one (36 MB for 12 MP, 72 MB as 16-bit for PQ/HLG):
/// here the only full-size pixels are libheif's own planes. Averaging Y, Cb and Cr first and converting
/// after gives the average of the converted pixels (the matrix is affine), so the result matches libheif's
/// conversion followed by a box shrink, except where that conversion would clip.
struct HEIFPlanes {
    /// The shrunk image: RGB in [0, 1] (non-linear, unclipped) and alpha in [0, 1] when there is alpha.
    var width: Int
    var height: Int
    var rgb: [Float]
    var alpha: [Float]?

    /// YCbCr to RGB as H.273 defines it for one `matrix_coefficients` value and range.
    struct Matrix {
        var kr: Float, kb: Float
        var identity = false
        var fullRange: Bool

        /// The matrix libheif would use, or nil for those this file does not handle (YCgCo, constant
        /// luminance, chromaticity-derived, ICtCp): the caller then lets libheif convert.
        init?(nclx: heif_color_profile_nclx?) {
            fullRange = nclx.map { $0.full_range_flag != 0 } ?? true
            switch nclx?.matrix_coefficients ?? heif_matrix_coefficients_ITU_R_BT_601_6 {
            case heif_matrix_coefficients_RGB_GBR: (kr, kb, identity) = (0, 0, true)
            case heif_matrix_coefficients_ITU_R_BT_709_5: (kr, kb) = (0.2126, 0.0722)
            case heif_matrix_coefficients_US_FCC_T47: (kr, kb) = (0.30, 0.11)
            case heif_matrix_coefficients_ITU_R_BT_470_6_System_B_G, heif_matrix_coefficients_ITU_R_BT_601_6,
                 heif_matrix_coefficients_unspecified: (kr, kb) = (0.299, 0.114)
            case heif_matrix_coefficients_SMPTE_240M: (kr, kb) = (0.212, 0.087)
            case heif_matrix_coefficients_ITU_R_BT_2020_2_non_constant_luminance: (kr, kb) = (0.2627, 0.0593)
            default: return nil
            }
        }
    }

    /// One plane of a decoded image, read in place.
    struct Plane {
        let base: UnsafePointer<UInt8>
        let stride: Int, width: Int, height: Int, bits: Int

        init?(_ image: OpaquePointer, _ channel: heif_channel) {
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
        @inline(__always) func sample(_ x: Int, _ y: Int) -> Int {
            bits > 8 ? Int(UnsafeRawPointer(base + y * stride).load(fromByteOffset: 2 * x, as: UInt16.self)) : Int(base[y * stride + x])
        }

        var maxValue: Float { Float((1 << bits) - 1) }
    }

    /// Shrinks `image` (as returned by `heif_decode_image` with the native colourspace) by `k`, or returns
    /// nil when its layout or matrix is one this file does not handle. `premultiplied` colour is averaged
    /// as it is and divided by alpha afterwards; straight colour is weighted by alpha.
    static func shrink(_ image: OpaquePointer, factor k: Int, nclx: heif_color_profile_nclx?, premultiplied: Bool) -> HEIFPlanes? {
        guard let matrix = Matrix(nclx: nclx), heif_image_get_colorspace(image) == heif_colorspace_YCbCr
                || heif_image_get_colorspace(image) == heif_colorspace_monochrome,
              let y = Plane(image, heif_channel_Y) else { return nil }
        let chroma = heif_image_get_chroma_format(image)
        var cb: Plane?, cr: Plane?
        if chroma != heif_chroma_monochrome {
            guard [heif_chroma_420, heif_chroma_422, heif_chroma_444].contains(chroma),
                  let b = Plane(image, heif_channel_Cb), let r = Plane(image, heif_channel_Cr),
                  b.width == r.width, b.height == r.height, b.bits == r.bits,
                  (b.width + 1) * 2 >= y.width, (b.height + 1) * 2 >= y.height, b.width <= y.width, b.height <= y.height,
                  !matrix.identity || (b.width == y.width && b.height == y.height) else { return nil }
            (cb, cr) = (b, r)
        } else if matrix.identity { return nil }
        let alpha = Plane(image, heif_channel_Alpha)
        if let alpha, alpha.width != y.width || alpha.height != y.height { return nil }
        let w = y.width, h = y.height, outW = (w + k - 1) / k, outH = (h + k - 1) / k
        var out = HEIFPlanes(width: outW, height: outH, rgb: [Float](repeating: 0, count: outW * outH * 3),
                             alpha: alpha == nil ? nil : [Float](repeating: 0, count: outW * outH))
        let weighted = alpha != nil && !premultiplied
        // Sums per output column: luma (alpha-weighted), its weight, alpha, and the same for chroma.
        var sy = [Double](repeating: 0, count: outW), sw = sy, sa = sy, sb = sy, sr = sy, cw = sy
        for oy in 0..<outH {
            for i in 0..<outW { sy[i] = 0; sw[i] = 0; sa[i] = 0; sb[i] = 0; sr[i] = 0; cw[i] = 0 }
            let y0 = oy * k, y1 = min(h, y0 + k)
            for row in y0..<y1 {
                for ox in 0..<outW {
                    var accY = 0, accW = 0, accA = 0
                    for x in (ox * k)..<min(w, ox * k + k) {
                        let a = alpha?.sample(x, row) ?? 1
                        accY += y.sample(x, row) * (weighted ? a : 1)
                        accW += weighted ? a : 1
                        accA += a
                    }
                    sy[ox] += Double(accY); sw[ox] += Double(accW); sa[ox] += Double(accA)
                }
            }
            if let cb, let cr {
                // The chroma samples whose areas meet the block (a block edge may split one for odd `k`).
                let fx = (w + cb.width - 1) / cb.width, fy = (h + cb.height - 1) / cb.height
                for crow in (y0 / fy)..<min(cb.height, (y1 + fy - 1) / fy) {
                    for ox in 0..<outW {
                        var accB = 0, accR = 0, accW = 0
                        for cx in (ox * k / fx)..<min(cb.width, (min(w, ox * k + k) + fx - 1) / fx) {
                            let a = weighted ? alpha!.sample(min(w - 1, cx * fx), min(h - 1, crow * fy)) : 1
                            accB += cb.sample(cx, crow) * a; accR += cr.sample(cx, crow) * a; accW += a
                        }
                        sb[ox] += Double(accB); sr[ox] += Double(accR); cw[ox] += Double(accW)
                    }
                }
            }
            for ox in 0..<outW {
                let n = Double(min(k, w - ox * k) * (y1 - y0))
                let luma = sw[ox] > 0 ? Float(sy[ox] / sw[ox]) : 0
                var (r, g, b): (Float, Float, Float)
                if let cb {
                    let u = cw[ox] > 0 ? Float(sb[ox] / cw[ox]) : Float(1 << (cb.bits - 1))
                    let v = cw[ox] > 0 ? Float(sr[ox] / cw[ox]) : Float(1 << (cb.bits - 1))
                    (r, g, b) = convert(luma, u, v, lumaBits: y.bits, chromaBits: cb.bits, matrix)
                } else {
                    let l = normalise(luma, bits: y.bits, full: matrix.fullRange)
                    (r, g, b) = (l, l, l)
                }
                let o = oy * outW + ox
                if let alpha {
                    let a = Float(sa[ox] / n) / alpha.maxValue
                    out.alpha![o] = a
                    if premultiplied, a > 0 { (r, g, b) = (r / a, g / a, b / a) }
                }
                out.rgb[3 * o] = r; out.rgb[3 * o + 1] = g; out.rgb[3 * o + 2] = b
            }
        }
        return out
    }

    /// Luma code value to [0, 1].
    static func normalise(_ v: Float, bits: Int, full: Bool) -> Float {
        let scale = Float(1 << (bits - 8))
        return full ? v / Float((1 << bits) - 1) : (v - 16 * scale) / (219 * scale)
    }

    /// Averaged Y, Cb, Cr code values to non-linear R, G, B in [0, 1] (H.273 equations 29 to 31 inverted).
    static func convert(_ y: Float, _ cb: Float, _ cr: Float, lumaBits: Int, chromaBits: Int, _ m: Matrix) -> (Float, Float, Float) {
        let l = normalise(y, bits: lumaBits, full: m.fullRange)
        let cs = Float(1 << (chromaBits - 8))
        if m.identity { return (normalise(cr, bits: chromaBits, full: m.fullRange), l, normalise(cb, bits: chromaBits, full: m.fullRange)) }
        let half = Float(1 << (chromaBits - 1))
        let range = m.fullRange ? Float((1 << chromaBits) - 1) : 224 * cs
        let u = (cb - half) / range, v = (cr - half) / range
        let r = l + 2 * (1 - m.kr) * v
        let b = l + 2 * (1 - m.kb) * u
        let g = (l - m.kr * r - m.kb * b) / (1 - m.kr - m.kb)
        return (r, g, b)
    }

    /// 8-bit RGB or RGBA (straight alpha), clipped and rounded.
    func image8() -> Image {
        let c = alpha == nil ? 3 : 4
        var pixels = [UInt8](repeating: 0, count: width * height * c)
        for i in 0..<(width * height) {
            for j in 0..<3 { pixels[i * c + j] = UInt8(min(255, max(0, rgb[3 * i + j] * 255).rounded())) }
            if let alpha { pixels[i * 4 + 3] = UInt8(min(255, max(0, alpha[i] * 255).rounded())) }
        }
        return Image(width: width, height: height, channels: c, pixels: pixels)
    }

    /// 16-bit RGB (full range), what `ToneMapper.map` reads.
    func rgb16() -> [UInt16] {
        rgb.map { UInt16(min(65535, max(0, $0 * 65535).rounded())) }
    }
}
