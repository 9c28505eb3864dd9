import CHeif
import CHeifLoader

/// AVIF and HEIC stills through libheif (HEVC via libde265, AV1 via libaom/dav1d): the primary item,
/// grids assembled by libheif, `irot`/`imir`/`clap` applied by libheif (so EXIF orientation is ignored:
/// no double rotation), alpha, the ICC or nclx colour box, and the embedded thumbnail item when it covers
/// the output. HEIF cannot be decoded scaled, so the pixel limit applies to the whole primary image.
/// Cost: libheif's planar RGB at full size (plus, while libheif converts, the decoder's YCbCr); our side
/// box-shrinks those planes in place (`HEIFPlanes`) rather than asking for another, interleaved, copy.
package enum HEIFDecoder {
    /// One owner per libheif object, each released in its `deinit`.
    package final class Context {
        package let raw: OpaquePointer
        package init() throws {
            if let why = flipbook_heif_load() {
                throw FlipbookError(.unsupported, "libheif is not available", underlying: String(cString: why))
            }
            // AV1 through our dav1d plugin (one frame in flight) rather than libheif's; if registration
            // failed, libheif's own plugin still decodes.
            _ = HEIFDecoder.registeredDav1d
            guard let c = heif_context_alloc() else { throw FlipbookError(.codec, "libheif could not be initialised") }
            raw = c
        }
        deinit { heif_context_free(raw) }
    }

    /// A handle keeps its context alive: libheif's handles point into the context's data.
    package final class Handle {
        package let raw: OpaquePointer
        package let context: Context
        package init(_ raw: OpaquePointer, context: Context) {
            self.raw = raw
            self.context = context
        }
        deinit { heif_image_handle_release(raw) }
        package var width: Int { Int(heif_image_handle_get_width(raw)) }
        package var height: Int { Int(heif_image_handle_get_height(raw)) }
        package var hasAlpha: Bool { heif_image_handle_has_alpha_channel(raw) != 0 }
    }

    package final class DecodedImage {
        package let raw: OpaquePointer
        package init(_ raw: OpaquePointer) { self.raw = raw }
        deinit { heif_image_release(raw) }
    }

    /// `flipbook_heif_register_dav1d()`'s result, evaluated once (Swift runs a static initialiser once).
    package static let registeredDav1d = flipbook_heif_register_dav1d() == 0

    /// A libheif status to `throws`.
    package static func check(_ error: heif_error, _ what: String) throws {
        guard error.code != heif_error_Ok else { return }
        let text = error.message.map { String(cString: $0) } ?? ""
        let code: FlipbookError.Code
        switch error.code {
        case heif_error_Unsupported_filetype, heif_error_Unsupported_feature: code = .unsupported
        case heif_error_Memory_allocation_error: code = .limitExceeded
        case heif_error_Decoder_plugin_error: code = .codec
        default: code = .corrupt
        }
        if code == .corrupt, error.subcode == heif_suberror_End_of_data {
            throw FlipbookError(.truncated, "HEIF data ends early", underlying: text, context: what)
        }
        throw FlipbookError(code, "HEIF image is not decodable", underlying: text, context: what)
    }

    /// Opens `bytes` (which must outlive the handle: libheif reads them in place) and returns its primary item.
    package static func primary(_ bytes: UnsafeRawBufferPointer) throws -> Handle {
        let context = try Context()
        try check(heif_context_read_from_memory_without_copy(context.raw, bytes.baseAddress, bytes.count, nil),
                  "heif_context_read_from_memory")
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context.raw, &handle), "heif_context_get_primary_image_handle")
        guard let handle else { throw FlipbookError(.corrupt, "HEIF file has no primary image") }
        return Handle(handle, context: context)
    }

    /// Header facts for `probe`: the displayed size (after libheif's transformations) and alpha.
    package static func header(_ source: some ByteSource, type: MediaType) throws -> StillHeader {
        try source.withContiguousBytes { bytes in
            let handle = try primary(bytes)
            // Orientation stays `.up`: libheif's transformations already give the displayed size.
            return StillHeader(width: handle.width, height: handle.height, hasAlpha: handle.hasAlpha,
                               codec: type == .avif ? "av1" : "hevc")
        }
    }

    package struct Decoded {
        package var image: Image
        /// True when the embedded thumbnail item was decoded instead of the primary image.
        package var usedThumbnailItem: Bool
    }

    /// The thumbnail for `request`: the thumbnail item if it covers the output with the same shape, else the
    /// primary image decoded and shrunk. Colour: ICC profiles and wide-gamut nclx to sRGB, PQ/HLG tone-mapped.
    package static func thumbnail(_ bytes: UnsafeRawBufferPointer, _ request: ThumbnailRequest, limits: Limits) throws -> Decoded {
        let decoded = try decode(bytes, [request], limits: limits)
        return Decoded(image: decoded.still.thumbnail(request), usedThumbnailItem: decoded.usedThumbnailItem)
    }

    /// One decode serving every request (`ScaledStill.decodePlan`): the thumbnail item if it covers the
    /// largest with the same shape, else the primary image decoded and box-shrunk to at least twice it.
    package static func decode(_ bytes: UnsafeRawBufferPointer, _ requests: [ThumbnailRequest], limits: Limits) throws
        -> (still: ScaledStill, usedThumbnailItem: Bool) {
        let main = try primary(bytes)
        let full = Size(width: main.width, height: main.height)
        // Orientation is `.up`: libheif's transformations already give the displayed size.
        let plan = ScaledStill.decodePlan(display: full, orientation: .up, requests: requests)
        var chosen = main, usedThumbnail = false
        if let thumb = thumbnailItem(of: main, covering: plan.output, full: full) {
            chosen = thumb
            usedThumbnail = true
        }
        try limits.checkPixels(width: chosen.width, height: chosen.height, what: "HEIF image (decoded whole, not scaled)")
        let profile = colourProfile(main)
        let image: Image
        if let transfer = profile.hdr, heif_image_handle_get_luma_bits_per_pixel(chosen.raw) > 8 {
            image = try decodeHDR(chosen, transfer: transfer, plan: plan, full: full)
        } else {
            // Whole-factor box shrink straight out of libheif's plane (at least 2x left for the Lanczos).
            image = try decode8(chosen, factor: PNGStreamDecoder.factor(scale: plan.scale * Double(full.width) / Double(chosen.width)))
        }
        // `image` shows the whole primary image at its own size (thumbnail item, shrunk HDR, or full); HDR is
        // tone-mapped to sRGB already.
        let still = ScaledStill(image: image, fullSize: full, orientation: .up, colour: profile.hdr != nil ? .done : .embedded(profile.icc),
                                plannedScale: plan.scale)
        return (still, usedThumbnail)
    }

    /// The smallest thumbnail item at least as large as `output` with the primary image's aspect ratio.
    package static func thumbnailItem(of main: Handle, covering output: Size, full: Size) -> Handle? {
        let count = Int(heif_image_handle_get_number_of_thumbnails(main.raw))
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let n = Int(heif_image_handle_get_list_of_thumbnail_IDs(main.raw, &ids, Int32(count)))
        var best: Handle?
        for id in ids.prefix(n) {
            var raw: OpaquePointer?
            guard heif_image_handle_get_thumbnail(main.raw, id, &raw).code == heif_error_Ok, let raw else { continue }
            let thumb = Handle(raw, context: main.context)
            let sameShape = abs(Double(thumb.width) / Double(thumb.height) - Double(full.width) / Double(full.height)) < 0.01
            guard sameShape, thumb.width >= output.width, thumb.height >= output.height,
                  thumb.hasAlpha == main.hasAlpha else { continue }
            if best == nil || thumb.width < best!.width { best = thumb }
        }
        return best
    }

    package struct Colour {
        package var icc: [UInt8]?
        package var hdr: ToneMapper.Transfer?
    }

    /// The colour description: an ICC profile (`prof`/`rICC`), or an nclx box. Wide-gamut nclx primaries
    /// become an ICC profile made by Little CMS; PQ and HLG transfers select tone mapping.
    package static func colourProfile(_ handle: Handle) -> Colour {
        var result = Colour()
        let type = heif_image_handle_get_color_profile_type(handle.raw)
        if type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC {
            let size = heif_image_handle_get_raw_color_profile_size(handle.raw)
            if size > 0, size <= EmbeddedProfile.maxBytes {
                var bytes = [UInt8](repeating: 0, count: size)
                if heif_image_handle_get_raw_color_profile(handle.raw, &bytes).code == heif_error_Ok { result.icc = bytes }
            }
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        if heif_image_handle_get_nclx_color_profile(handle.raw, &nclx).code == heif_error_Ok, let nclx {
            defer { heif_nclx_color_profile_free(nclx) }
            let p = nclx.pointee
            switch p.transfer_characteristics {
            case heif_transfer_characteristic_ITU_R_BT_2100_0_PQ: result.hdr = .pq
            case heif_transfer_characteristic_ITU_R_BT_2100_0_HLG: result.hdr = .hlg
            default:
                let wide = ![heif_color_primaries_ITU_R_BT_709_5, heif_color_primaries_unspecified].contains(p.color_primaries)
                if result.icc == nil, wide {
                    result.icc = ColourManagement.rgbProfile(
                        red: (Double(p.color_primary_red_x), Double(p.color_primary_red_y)),
                        green: (Double(p.color_primary_green_x), Double(p.color_primary_green_y)),
                        blue: (Double(p.color_primary_blue_x), Double(p.color_primary_blue_y)),
                        white: (Double(p.color_primary_white_x), Double(p.color_primary_white_y)))
                }
            }
        }
        return result
    }

    /// 8-bit RGB(A) box-shrunk by `factor`: from libheif's native planes when `HEIFPlanes` handles their
    /// layout (no full-size RGB buffer), else libheif converting to interleaved RGB(A) first.
    package static func decode8(_ handle: Handle, factor: Int = 1) throws -> Image {
        let premultiplied = handle.hasAlpha && heif_image_handle_is_premultiplied_alpha(handle.raw) != 0
        if let planes = try nativePlanes(handle, factor: factor, premultiplied: premultiplied) { return planes.image8() }
        let alpha = handle.hasAlpha
        let image = try decode(handle, colourspace: heif_colorspace_RGB, chroma: alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB)
        let channels = alpha ? 4 : 3
        return try copyPlane(image, channels: channels, bytesPerSample: 1) { w, h, src, stride in
            if factor > 1 {
                var shrunk = BoxShrink.plane(src, stride: stride, width: w, height: h, channels: channels, factor: factor)
                if premultiplied { unpremultiply(&shrunk.pixels) }
                return shrunk
            }
            var pixels = [UInt8](repeating: 0, count: w * h * channels)
            for y in 0..<h {
                pixels.withUnsafeMutableBufferPointer { dst in
                    (dst.baseAddress! + y * w * channels).update(from: src + y * stride, count: w * channels)
                }
            }
            if premultiplied { unpremultiply(&pixels) }
            return Image(width: w, height: h, channels: channels, pixels: pixels)
        }
    }

    /// The image decoded in the layout libheif produces anyway (planar RGB, or monochrome) and shrunk by
    /// `factor` through `HEIFPlanes`; nil when `HEIFPlanes` does not handle the layout. Monochrome range
    /// comes from the decoded image's nclx (what libheif itself would use), else the item's. libheif's
    /// planes are released before this returns.
    package static func nativePlanes(_ handle: Handle, factor: Int, premultiplied: Bool) throws -> HEIFPlanes? {
        let image = try decode(handle, colourspace: heif_colorspace_undefined, chroma: heif_chroma_undefined)
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        if heif_image_get_nclx_color_profile(image.raw, &nclx).code != heif_error_Ok || nclx == nil {
            nclx = nil
            _ = heif_image_handle_get_nclx_color_profile(handle.raw, &nclx)
        }
        defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
        let fullRange = nclx.map { $0.pointee.full_range_flag != 0 } ?? true
        return withExtendedLifetime(image) {
            HEIFPlanes.shrink(image.raw, factor: factor, fullRange: fullRange, premultiplied: premultiplied)
        }
    }

    /// PQ/HLG: box-shrunk to at least twice the output (from the native planes, else from libheif's 16-bit
    /// RGB), then tone-mapped to sRGB as video is.
    package static func decodeHDR(_ handle: Handle, transfer: ToneMapper.Transfer, plan: ThumbnailPlan, full: Size) throws -> Image {
        let mapper = ToneMapper(transfer: transfer)
        let k = PNGStreamDecoder.factor(scale: plan.scale * Double(full.width) / Double(max(1, handle.width)))
        let shrunk: (width: Int, height: Int, rgb: [UInt16])
        if let planes = try nativePlanes(handle, factor: k, premultiplied: false) {
            shrunk = (planes.width, planes.height, planes.rgb16())
        } else {
            shrunk = try interleavedHDR(handle, factor: k)
        }
        var out = [UInt8](repeating: 0, count: shrunk.width * shrunk.height * 3)
        shrunk.rgb.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { mapper.map(s.baseAddress!, to: $0.baseAddress!, count: shrunk.width * shrunk.height) }
        }
        return Image(width: shrunk.width, height: shrunk.height, channels: 3, pixels: out)
    }

    /// libheif's 16-bit interleaved RGB, box-shrunk by `k` and scaled to the full 16-bit range.
    package static func interleavedHDR(_ handle: Handle, factor k: Int) throws -> (width: Int, height: Int, rgb: [UInt16]) {
        let bits = Int(heif_image_handle_get_luma_bits_per_pixel(handle.raw))
        let image = try decode(handle, colourspace: heif_colorspace_RGB, chroma: heif_chroma_interleaved_RRGGBB_LE)
        return try copyPlane(image, channels: 3, bytesPerSample: 2) { w, h, src, stride in
            let outW = (w + k - 1) / k, outH = (h + k - 1) / k
            let maxValue = Double((1 << bits) - 1)
            var shrunk = [UInt16](repeating: 0, count: outW * outH * 3)
            for oy in 0..<outH {
                for ox in 0..<outW {
                    var sum = (0.0, 0.0, 0.0), n = 0.0
                    for y in (oy * k)..<min(h, oy * k + k) {
                        let row = UnsafeRawPointer(src + y * stride).assumingMemoryBound(to: UInt16.self)
                        for x in (ox * k)..<min(w, ox * k + k) {
                            sum.0 += Double(UInt16(littleEndian: row[3 * x])); sum.1 += Double(UInt16(littleEndian: row[3 * x + 1]))
                            sum.2 += Double(UInt16(littleEndian: row[3 * x + 2])); n += 1
                        }
                    }
                    let o = (oy * outW + ox) * 3
                    shrunk[o] = UInt16(min(65535, sum.0 / n / maxValue * 65535))
                    shrunk[o + 1] = UInt16(min(65535, sum.1 / n / maxValue * 65535))
                    shrunk[o + 2] = UInt16(min(65535, sum.2 / n / maxValue * 65535))
                }
            }
            return (outW, outH, shrunk)
        }
    }

    private static func decode(_ handle: Handle, colourspace: heif_colorspace, chroma: heif_chroma) throws -> DecodedImage {
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        var raw: OpaquePointer?
        try check(heif_decode_image(handle.raw, &raw, colourspace, chroma, options), "heif_decode_image")
        guard let raw else { throw FlipbookError(.codec, "libheif returned no image") }
        return DecodedImage(raw)
    }

    private static func copyPlane<T>(_ image: DecodedImage, channels: Int, bytesPerSample: Int,
                                     _ body: (Int, Int, UnsafePointer<UInt8>, Int) throws -> T) throws -> T {
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image.raw, heif_channel_interleaved, &stride) else {
            throw FlipbookError(.codec, "libheif image has no interleaved plane")
        }
        let w = Int(heif_image_get_width(image.raw, heif_channel_interleaved))
        let h = Int(heif_image_get_height(image.raw, heif_channel_interleaved))
        guard w > 0, h > 0, Int(stride) >= w * channels * bytesPerSample else {
            throw FlipbookError(.codec, "libheif image plane has an unexpected layout")
        }
        return try withExtendedLifetime(image) { try body(w, h, plane, Int(stride)) }
    }

    private static func unpremultiply(_ pixels: inout [UInt8]) {
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let a = Int(pixels[i + 3])
            guard a > 0, a < 255 else { continue }
            for c in 0..<3 { pixels[i + c] = UInt8(min(255, (Int(pixels[i + c]) * 255 + a / 2) / a)) }
        }
    }
}

extension ToneMapper {
    /// A mapper for a still whose colour box says PQ or HLG: the nominal 1,000 cd/m² peak (stills carry no
    /// content light level that libheif reports).
    package init(transfer: Transfer) {
        self.transfer = transfer
        peak = max(1, 1000 / Self.referenceWhite)
    }
}
