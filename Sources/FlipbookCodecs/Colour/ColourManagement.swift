import CLCMS2

/// Embedded ICC profiles to sRGB, on the small (already shrunk) image. Every still path calls one of these
/// after shrink-on-load, so the cost follows the thumbnail, not the source.
package enum ColourManagement {
    /// `image` (RGB or RGBA, in the space `profile` describes) converted to sRGB. A grey profile reads the
    /// first channel as grey. Profiles that do not fit the pixels (CMYK on RGB data, Lab, broken files) leave
    /// the image as it is, as libvips does with an incompatible profile.
    package static func toSRGB(_ image: Image, profile: [UInt8]?) -> Image {
        guard let profile, !profile.isEmpty, let parsed = try? ICCProfile(bytes: profile) else { return image }
        let alpha = image.channels == 4
        let format: cmsUInt32Number
        switch parsed.space {
        case .rgb: format = alpha ? fb_TYPE_RGBA_8 : fb_TYPE_RGB_8
        case .gray: format = fb_TYPE_GRAY_8
        default: return image
        }
        guard let transform = try? ColourTransform.cached(profile: profile, inputFormat: format,
                                                          inputChannels: parsed.space == .gray ? 1 : image.channels,
                                                          outputAlpha: alpha) else { return image }
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        let count = image.width * image.height
        if parsed.space == .gray {
            let c = image.channels
            var grey = [UInt8](repeating: 0, count: count)
            image.pixels.withUnsafeBufferPointer { src in
                for i in 0..<count { grey[i] = src[i * c] }
            }
            grey.withUnsafeBytes { g in out.withUnsafeMutableBytes { transform.apply(g.baseAddress!, $0.baseAddress!, count: count) } }
            if alpha {  // COPY_ALPHA has nothing to copy from one grey channel
                image.pixels.withUnsafeBufferPointer { src in for i in 0..<count { out[i * 4 + 3] = src[i * 4 + 3] } }
            }
        } else {
            image.pixels.withUnsafeBytes { s in out.withUnsafeMutableBytes { transform.apply(s.baseAddress!, $0.baseAddress!, count: count) } }
        }
        return Image(width: image.width, height: image.height, channels: image.channels, pixels: out)
    }

    /// Interleaved 8-bit CMYK (`inverted`: Adobe's convention, 255 = no ink) to sRGB through `profile`, or
    /// the default CMYK profile (libvips's) when there is none or it is not a CMYK profile.
    package static func cmykToSRGB(_ cmyk: UnsafeBufferPointer<UInt8>, width: Int, height: Int, profile: [UInt8]?, inverted: Bool)
        throws -> Image
    {
        let transform = try cmykTransform(profile: profile, inverted: inverted)
        var out = [UInt8](repeating: 0, count: width * height * 3)
        out.withUnsafeMutableBytes { transform.apply(UnsafeRawPointer(cmyk.baseAddress!), $0.baseAddress!, count: width * height) }
        return Image(width: width, height: height, channels: 3, pixels: out)
    }
}

extension ColourManagement {
    /// The (cached) transform `cmykToSRGB` uses: building one for a CMYK LUT profile takes ~12 ms, which the
    /// JPEG path spends on another thread while libjpeg decodes.
    package static func cmykTransform(profile: [UInt8]?, inverted: Bool) throws -> ColourTransform {
        var bytes = ICCProfile.defaultCMYKBytes
        if let profile, let parsed = try? ICCProfile(bytes: profile), parsed.space == .cmyk { bytes = profile }
        let format = inverted ? fb_TYPE_CMYK_8_REV : fb_TYPE_CMYK_8
        return try ColourTransform.cached(profile: bytes, inputFormat: format, inputChannels: 4, outputAlpha: false)
    }
}

extension ColourManagement {
    /// An RGB ICC profile (bytes) for the given CIE xy primaries and white point with the sRGB transfer
    /// curve, made by Little CMS: how wide-gamut nclx colour boxes (Display P3, BT.2020) reach the ICC path.
    package static func rgbProfile(red: (Double, Double), green: (Double, Double), blue: (Double, Double),
                           white: (Double, Double)) -> [UInt8]? {
        var whitePoint = cmsCIExyY(x: white.0, y: white.1, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: red.0, y: red.1, Y: 1), Green: cmsCIExyY(x: green.0, y: green.1, Y: 1),
                                        Blue: cmsCIExyY(x: blue.0, y: blue.1, Y: 1))
        // IEC 61966-2.1: parametric curve type 4.
        let params: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = params.withUnsafeBufferPointer({ cmsBuildParametricToneCurve(nil, 4, $0.baseAddress) }) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&whitePoint, &primaries, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }
}
