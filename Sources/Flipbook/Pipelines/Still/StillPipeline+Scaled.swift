/// The still paths that decode at (or near) the thumbnail size without TurboJPEG: WebP through libwebp's
/// scaled decode, PNG streamed through libpng, AVIF/HEIC through libheif. Each applies the embedded
/// profile to the finished thumbnail, unless the request keeps it.
extension StillPipeline {
    func webpThumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        let header = try StillHeader.read(input.source, type: .webp)
        let plan = Self.plan(header, request)
        let decoded = try input.source.withContiguousBytes {
            try WebPScaledDecoder.decode($0, scale: plan.scale, limits: input.limits)
        }
        let image = Resampler.finish(decoded.image, fullSize: decoded.fullSize, orientation: header.orientation, plan: plan)
        let profile = EmbeddedProfile.webp(input.source)
        return request.keepProfile ? image.tagged(profile) : ColourManagement.toSRGB(image, profile: profile)
    }

    func pngThumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        let header = try StillHeader.read(input.source, type: .png)
        let plan = Self.plan(header, request)
        let decoded = try PNGStreamDecoder.decode(input.source, scale: plan.scale, limits: input.limits)
        let image = Resampler.finish(decoded.image, fullSize: decoded.fullSize, orientation: header.orientation, plan: plan)
        return request.keepProfile ? image.tagged(decoded.profile) : ColourManagement.toSRGB(image, profile: decoded.profile)
    }

    func heifThumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        try input.source.withContiguousBytes { try HEIFDecoder.thumbnail($0, request, limits: input.limits).image }
    }

    /// The plan in the stored grid, from a header's size and orientation.
    static func plan(_ header: StillHeader, _ request: ThumbnailRequest) -> ThumbnailPlan {
        let full = Size(width: header.width, height: header.height)
        let display = header.orientation.swapsAxes ? full.transposed : full
        return ThumbnailPlan.make(source: display, maxPixelSize: request.maxPixelSize, fit: request.fit,
                                  upscale: request.upscale).stored(for: header.orientation)
    }
}
