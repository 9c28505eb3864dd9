import CTurboJPEG

/// TurboJPEG, wrapped once: statuses become throws, handles are freed on every path.
package enum TurboJPEG {
    package struct Header {
        package var width: Int
        package var height: Int
        package var colorspace: TJCS
    }

    /// The decode scales TurboJPEG offers, as (numerator, denominator), largest first.
    package static let scalingFactors: [tjscalingfactor] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return [tjscalingfactor(num: 1, denom: 1)] }
        return (0..<Int(count)).map { factors[$0] }
    }()

    /// A decompressor handle owned by one call.
    package final class Handle {
        package let raw: tjhandle
        package init(compress: Bool) throws {
            guard let h = compress ? tjInitCompress() : tjInitDecompress() else {
                throw FlipbookError(.codec, "TurboJPEG could not be initialised")
            }
            raw = h
        }
        deinit { tjDestroy(raw) }
        package var errorText: String { String(cString: tjGetErrorStr2(raw)) }
        package var lastWasWarning: Bool { tjGetErrorCode(raw) == TJERR_WARNING.rawValue }
    }

    package static func header(_ jpeg: UnsafeRawBufferPointer) throws -> Header {
        let handle = try Handle(compress: false)
        var w: Int32 = 0, h: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard tjDecompressHeader3(handle.raw, base, UInt(jpeg.count), &w, &h, &subsampling, &colorspace) == 0 else {
            throw FlipbookError(.corrupt, "not a decodable JPEG header", underlying: handle.errorText, context: "tjDecompressHeader3")
        }
        return Header(width: Int(w), height: Int(h), colorspace: TJCS(rawValue: UInt32(colorspace)))
    }

    /// Decodes at `factor` to RGB (CMYK/YCCK converted through `cmykProfile` or the default CMYK profile,
    /// reading Adobe's inverted convention when `adobe`). Returns the image and a warning when libjpeg
    /// recovered from damage (for example a truncated scan).
    package static func decode(_ jpeg: UnsafeRawBufferPointer, header: Header, factor: tjscalingfactor, adobe: Bool,
                       cmykProfile: [UInt8]? = nil)
        throws -> (Image, warning: String?)
    {
        let handle = try Handle(compress: false)
        let w = Int(fb_tj_scaled(Int32(header.width), factor)), h = Int(fb_tj_scaled(Int32(header.height), factor))
        let cmyk = header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK
        let channels = cmyk ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: w * h * channels)
        let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
        // TJFLAG_LIMITSCANS: refuse progressive files with absurd scan counts (a known CPU-exhaustion attack).
        let flags = Int32(TJFLAG_LIMITSCANS)
        let format = cmyk ? TJPF_CMYK : TJPF_RGB
        let status = pixels.withUnsafeMutableBufferPointer {
            tjDecompress2(handle.raw, base, UInt(jpeg.count), $0.baseAddress, Int32(w), 0, Int32(h),
                          Int32(format.rawValue), flags)
        }
        var warning: String?
        if status != 0 {
            if handle.lastWasWarning {
                warning = handle.errorText
            } else {
                throw FlipbookError(.corrupt, "JPEG data could not be decoded", underlying: handle.errorText, context: "tjDecompress2")
            }
        }
        guard cmyk else { return (Image(width: w, height: h, channels: 3, pixels: pixels), warning) }
        // CMYK/YCCK through its embedded CMYK profile, else libvips's default one (Little CMS), at the
        // decoded (already DCT-scaled) size.
        let rgb = try pixels.withUnsafeBufferPointer {
            try ColourManagement.cmykToSRGB($0, width: w, height: h, profile: cmykProfile, inverted: adobe)
        }
        return (rgb, warning)
    }

    /// Encodes an RGB image (alpha is flattened onto white first) as baseline 4:2:0 JPEG.
    package static func encode(_ image: Image, quality: Int) throws -> [UInt8] {
        let rgb = image.flattened()
        let handle = try Handle(compress: true)
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = rgb.pixels.withUnsafeBufferPointer {
            tjCompress2(handle.raw, $0.baseAddress, Int32(rgb.width), 0, Int32(rgb.height), Int32(TJPF_RGB.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), Int32(min(100, max(1, quality))), 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            throw FlipbookError(.codec, "JPEG encoding failed", underlying: handle.errorText, context: "tjCompress2")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
