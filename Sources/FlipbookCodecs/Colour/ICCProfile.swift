import CFlipbookProfiles
import CLCMS2

/// An ICC profile opened by Little CMS: the one owner of its `cmsHPROFILE`, closed in `deinit`.
/// Costs the parsed profile (a few KB to ~1 MB for LUT-based CMYK profiles).
package final class ICCProfile: @unchecked Sendable {
    /// What a profile's device side holds; anything else (Lab, named colour, ...) is not applied.
    package enum Space: Equatable { case rgb, gray, cmyk, other }

    package let handle: cmsHPROFILE
    /// FNV-1a of the profile bytes: the transform cache's key.
    package let hash: UInt64

    /// Parses `bytes` (copied by lcms). Throws `.corrupt` if lcms cannot read it.
    package init(bytes: [UInt8]) throws {
        guard let h = bytes.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }) else {
            throw FlipbookError(.corrupt, "embedded ICC profile is not readable", context: "cmsOpenProfileFromMem")
        }
        handle = h
        hash = ICCProfile.fnv1a(bytes)
    }

    private init(handle: cmsHPROFILE, hash: UInt64) {
        self.handle = handle
        self.hash = hash
    }

    deinit { cmsCloseProfile(handle) }

    /// lcms's built-in sRGB (IEC 61966-2.1), the output of every transform.
    package static func sRGB() -> ICCProfile { ICCProfile(handle: cmsCreate_sRGBProfile(), hash: 0x5352_4742) }

    /// The default profile for CMYK without one: libvips's "Chemical proof" (public domain), compiled in.
    package static let defaultCMYKBytes: [UInt8] = {
        var size = 0
        let base = fb_default_cmyk_profile(&size)!
        return Array(UnsafeBufferPointer(start: base, count: size))
    }()

    package var space: Space {
        switch cmsGetColorSpace(handle) {
        case cmsSigRgbData: .rgb
        case cmsSigGrayData: .gray
        case cmsSigCmykData: .cmyk
        default: .other
        }
    }

    /// The profile's description tag (for logs and tests).
    package var name: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", &buffer, cmsUInt32Number(buffer.count))
        guard n > 0 else { return "" }
        return String(decoding: buffer.prefix(Int(n) - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h ^ UInt64(bytes.count)
    }
}
