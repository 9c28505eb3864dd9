/// A still decoded once, whole, at a reduced size (shrink-on-load), in its stored orientation and its own
/// colours: what one thumbnail, or several of different sizes and fits, are cut from. Each cut is what the
/// single-thumbnail path does after its decode (Lanczos to the plan, turned upright, converted to sRGB);
/// a thumbnail smaller than the one the decode was sized for is box-shrunk by a whole factor first, as
/// libvips shrinks before it reduces, so its Lanczos reads no more than twice its own size.
///
/// Cost of a cut: one Lanczos (a float buffer of output width x rows) plus, for the smaller ones, a box
/// shrink into an image of at most four times the output. The decoded image itself is only read.
package struct ScaledStill: Sendable {
    /// What is left to do to an output's colours.
    package enum Colour: Sendable {
        /// The embedded profile (nil: none): converted to sRGB, or kept (tagged) when a request keeps profiles.
        case embedded([UInt8]?)
        /// Converted to sRGB whatever the request says (libavcodec's fallback for JPEGs libjpeg refuses).
        case alwaysConverted([UInt8]?)
        /// Nothing: already sRGB (CMYK converted inside the decode, HDR tone-mapped).
        case done
    }

    /// The whole source at the decode's scale, in the stored (pre-orientation) grid.
    package var image: Image
    /// The source's full size in the stored grid.
    package var fullSize: Size
    /// The EXIF (or container) orientation still to apply.
    package var orientation: Orientation
    package var colour: Colour
    /// The scale (output pixels per source pixel) the decode was chosen for: thumbnails at that scale are
    /// resampled straight from `image`, exactly as the single-thumbnail path does; smaller ones shrink first.
    package var plannedScale: Double
    /// What the decoder recovered from, given to every output.
    package var warnings: [String]

    package init(image: Image, fullSize: Size, orientation: Orientation, colour: Colour, plannedScale: Double,
                 warnings: [String] = []) {
        self.image = image
        self.fullSize = fullSize
        self.orientation = orientation
        self.colour = colour
        self.plannedScale = plannedScale
        self.warnings = warnings
    }

    /// The source's size as displayed (after orientation).
    package var displaySize: Size { orientation.swapsAxes ? fullSize.transposed : fullSize }

    /// The plan for `request` in the stored grid.
    package func plan(_ request: ThumbnailRequest) -> ThumbnailPlan {
        ThumbnailPlan.make(source: displaySize, maxPixelSize: request.maxPixelSize, fit: request.fit,
                           upscale: request.upscale).stored(for: orientation)
    }

    /// The thumbnail for `request`: upright, exactly its planned size, sRGB unless it keeps the profile.
    package func thumbnail(_ request: ThumbnailRequest) -> Image {
        thumbnail(plan: plan(request), keepProfile: request.keepProfile)
    }

    /// The thumbnail for `plan` (stored grid).
    package func thumbnail(plan: ThumbnailPlan, keepProfile: Bool) -> Image {
        var base = image
        if plan.scale < plannedScale * (1 - 1e-9) {
            // Output pixels per decoded pixel; the same whole-factor rule as the PNG and HEIF shrink-on-load.
            let relative = plan.scale * Double(fullSize.width) / Double(image.width)
            let k = PNGStreamDecoder.factor(scale: relative)
            if k > 1 {
                base = image.pixels.withUnsafeBufferPointer {
                    BoxShrink.plane($0.baseAddress!, stride: image.width * image.channels, width: image.width,
                                    height: image.height, channels: image.channels, factor: k)
                }
            }
        }
        var out = Resampler.finish(base, fullSize: fullSize, orientation: orientation, plan: plan)
        switch colour {
        case .embedded(let profile): out = keepProfile ? out.tagged(profile) : ColourManagement.toSRGB(out, profile: profile)
        case .alwaysConverted(let profile): out = ColourManagement.toSRGB(out, profile: profile)
        case .done: break
        }
        if !warnings.isEmpty { out.warnings = warnings }
        return out
    }

    /// The plan one decode must be sized for to serve every request: the single request's own plan (so one
    /// thumbnail decodes exactly as it always has), else the whole source at the largest scale any needs.
    package static func decodePlan(display: Size, orientation: Orientation, requests: [ThumbnailRequest]) -> ThumbnailPlan {
        let plans = requests.map {
            ThumbnailPlan.make(source: display, maxPixelSize: $0.maxPixelSize, fit: $0.fit, upscale: $0.upscale)
        }
        if plans.count == 1 { return plans[0].stored(for: orientation) }
        let scale = plans.map(\.scale).max() ?? 1
        return ThumbnailPlan.whole(source: display, scale: scale).stored(for: orientation)
    }
}
