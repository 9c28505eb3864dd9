import CFFmpeg
import Glibc

/// HDR (PQ or HLG, BT.2020) to 8-bit sRGB for posters, previews and storyboards. Shown as if they were
/// SDR, HDR frames look flat and pale: their signal levels mean other light levels and their primaries
/// are wider. Each pixel of the scaled frame goes to light (SMPTE ST 2084 or the BT.2100 HLG inverse OETF
/// and OOTF), HDR reference white (203 cd/m², BT.2408) becomes SDR white, highlights up to the content's
/// peak roll off smoothly into the rest of the range, and BT.2020 primaries become BT.709's (BT.2087)
/// before the sRGB curve. Formulas are the standards'; the roll-off is this file's own.
package struct ToneMapper {
    package enum Transfer { case pq, hlg }

    package let transfer: Transfer
    /// The content's peak as a multiple of reference white.
    package let peak: Double
    /// Light below this multiple of reference white passes unchanged.
    package static let knee = 0.75
    package static let referenceWhite = 203.0

    /// A mapper for `frame`, or nil when its transfer is not PQ or HLG. A PQ peak comes from the frame's
    /// content light level (MaxCLL), else its mastering display's peak, else 1,000 cd/m² (the usual HDR10
    /// mastering peak). HLG is scene-referred: its peak is that of its nominal 1,000 cd/m² display.
    package init?(frame: UnsafeMutablePointer<AVFrame>) {
        switch frame.pointee.color_trc {
        case AVCOL_TRC_SMPTE2084: transfer = .pq
        case AVCOL_TRC_ARIB_STD_B67: transfer = .hlg
        default: return nil
        }
        let nits = transfer == .pq ? Self.contentPeak(frame) ?? 1000 : 1000
        peak = max(1, nits / Self.referenceWhite)
    }

    /// MaxCLL if the frame carries a non-zero one, else the mastering display's peak luminance, in cd/m².
    private static func contentPeak(_ frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        guard let av = try? LibAV.api() else { return nil }
        if let sd = av.av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL), sd.pointee.size >= MemoryLayout<AVContentLightMetadata>.size {
            let cll = UnsafeRawPointer(sd.pointee.data!).loadUnaligned(as: AVContentLightMetadata.self)
            if cll.MaxCLL > 0 { return Double(cll.MaxCLL) }
        }
        if let sd = av.av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA),
           sd.pointee.size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            let md = UnsafeRawPointer(sd.pointee.data!).loadUnaligned(as: AVMasteringDisplayMetadata.self)
            if md.has_luminance != 0, md.max_luminance.den > 0, md.max_luminance.num > 0 {
                return Double(md.max_luminance.num) / Double(md.max_luminance.den)
            }
        }
        return nil
    }

    /// Maps `count` pixels of native-endian RGB48 (non-linear BT.2020, full range) to RGB24 sRGB.
    package func map(_ source: UnsafePointer<UInt16>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count {
            var r = Double(source[3 * i]) / 65535, g = Double(source[3 * i + 1]) / 65535, b = Double(source[3 * i + 2]) / 65535
            switch transfer {
            case .pq:
                r = Self.pqToNits(r) / Self.referenceWhite; g = Self.pqToNits(g) / Self.referenceWhite; b = Self.pqToNits(b) / Self.referenceWhite
            case .hlg:
                // Scene light, then the OOTF for a 1,000 cd/m² display (system gamma 1.2, BT.2100 table 5).
                r = Self.hlgToScene(r); g = Self.hlgToScene(g); b = Self.hlgToScene(b)
                let ys = 0.2627 * r + 0.6780 * g + 0.0593 * b
                let gain = 1000 * pow(max(ys, 1e-9), 0.2) / Self.referenceWhite
                r *= gain; g *= gain; b *= gain
            }
            // BT.2020 to BT.709 primaries, in linear light (ITU-R BT.2087).
            var (lr, lg, lb) = (1.6605 * r - 0.5876 * g - 0.0728 * b,
                                -0.1246 * r + 1.1329 * g - 0.0083 * b,
                                -0.0182 * r - 0.1006 * g + 1.1187 * b)
            lr = max(0, lr); lg = max(0, lg); lb = max(0, lb)
            // Roll off on the largest channel and scale all three by the same factor, keeping hue.
            let m = max(lr, lg, lb)
            if m > Self.knee {
                let scale = rollOff(m) / m
                lr *= scale; lg *= scale; lb *= scale
            }
            destination[3 * i] = Self.srgb(lr)
            destination[3 * i + 1] = Self.srgb(lg)
            destination[3 * i + 2] = Self.srgb(lb)
        }
    }

    /// Identity below the knee; above it, [knee, peak] goes to [knee, 1] by s·x / (1 + (s - 1)·x), whose
    /// slope at the knee is 1 (s is the ratio of the two spans), so the curve has no corner.
    package func rollOff(_ m: Double) -> Double {
        let k = Self.knee
        guard peak > 1 else { return min(m, 1) }
        let s = (peak - k) / (1 - k)
        let x = min(1, (m - k) / (peak - k))
        return k + (1 - k) * s * x / (1 + (s - 1) * x)
    }

    /// SMPTE ST 2084 EOTF: signal in [0, 1] to cd/m².
    package static func pqToNits(_ e: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(max(e, 0), 1 / m2)
        return 10000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// BT.2100 HLG inverse OETF: signal in [0, 1] to normalised scene light in [0, 1].
    package static func hlgToScene(_ e: Double) -> Double {
        let a = 0.17883277, b = 0.28466892, c = 0.55991073
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// The sRGB transfer curve (IEC 61966-2-1), to 8 bits.
    package static func srgb(_ v: Double) -> UInt8 {
        let c = min(1, max(0, v))
        let e = c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055
        return UInt8((e * 255).rounded())
    }
}
