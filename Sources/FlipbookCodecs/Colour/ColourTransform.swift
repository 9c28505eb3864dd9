import CLCMS2
import Synchronization

/// A Little CMS transform from one source profile to sRGB: the one owner of its `cmsHTRANSFORM`, freed in
/// `deinit`. Made with `cmsFLAGS_NOCACHE` so one transform can run on several threads at once.
package final class ColourTransform: @unchecked Sendable {
    package let handle: cmsHTRANSFORM
    package let inputChannels: Int
    package let outputChannels: Int

    /// Relative colorimetric intent, no black point compensation: libvips's thumbnail defaults.
    package init(from source: ICCProfile, inputFormat: cmsUInt32Number, inputChannels: Int, outputAlpha: Bool) throws {
        let srgb = ICCProfile.sRGB()
        var flags = cmsUInt32Number(cmsFLAGS_NOCACHE)
        if outputAlpha { flags |= cmsUInt32Number(cmsFLAGS_COPY_ALPHA) }
        // Four-channel input: lcms precomputes a 17^4-node table by default (83,521 evaluations of a LUT
        // profile's pipeline, ~60 ms for the default CMYK profile, more than transforming a thumbnail's
        // pixels). 11^4 nodes cost a fifth of that; tetrahedral interpolation keeps the error below one level
        // on the test images. (cmsFLAGS_GRIDPOINTS(n) is a function-like macro: n << 16.)
        if source.space == .cmyk { flags |= cmsUInt32Number(11) << 16 }
        guard let t = cmsCreateTransform(source.handle, inputFormat, srgb.handle,
                                         outputAlpha ? fb_TYPE_RGBA_8 : fb_TYPE_RGB_8,
                                         cmsUInt32Number(INTENT_RELATIVE_COLORIMETRIC), flags) else {
            throw FlipbookError(.unsupported, "embedded ICC profile (\(source.name)) cannot be converted to sRGB",
                                context: "cmsCreateTransform")
        }
        handle = t
        self.inputChannels = inputChannels
        outputChannels = outputAlpha ? 4 : 3
    }

    deinit { cmsDeleteTransform(handle) }

    /// Converts `count` pixels. Cost: a table lookup and interpolation per pixel, no allocation.
    package func apply(_ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer, count: Int) {
        cmsDoTransform(handle, source, destination, cmsUInt32Number(count))
    }

    // MARK: cache

    private struct Key: Hashable {
        package var profileHash: UInt64
        package var inputFormat: cmsUInt32Number
        package var outputAlpha: Bool
    }

    /// Transforms by profile hash and pixel format. Building one costs 1-30 ms (a CMYK LUT profile is the
    /// slow case); a batch of files from one camera or print workflow shares one. At most 16 are kept.
    private static let cache = Mutex<[Key: ColourTransform]>([:])
    private static let capacity = 16

    /// A cached transform from the profile `bytes` (parsed only on a miss).
    package static func cached(profile bytes: [UInt8], inputFormat: cmsUInt32Number, inputChannels: Int, outputAlpha: Bool)
        throws -> ColourTransform
    {
        let key = Key(profileHash: ICCProfile.fnv1a(bytes), inputFormat: inputFormat, outputAlpha: outputAlpha)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let made = try ColourTransform(from: ICCProfile(bytes: bytes), inputFormat: inputFormat,
                                       inputChannels: inputChannels, outputAlpha: outputAlpha)
        cache.withLock {
            if $0.count >= capacity, let victim = $0.keys.first { $0[victim] = nil }
            $0[key] = made
        }
        return made
    }
}
