/// The still paths that decode at (or near) the thumbnail size without TurboJPEG: WebP through libwebp's
/// scaled decode, PNG streamed through libpng, AVIF/HEIC through libheif. Each leaves the embedded profile
/// for the finished thumbnails (`ScaledStill`), unless a request keeps it.
extension StillPipeline {
    func webpDecode(_ input: MediaInput, _ requests: [ThumbnailRequest]) throws -> ScaledStill {
        let header = try StillHeader.read(input.source, type: .webp)
        let plan = Self.plan(header, requests)
        let decoded = try input.source.withContiguousBytes {
            try WebPScaledDecoder.decode($0, scale: plan.scale, limits: input.limits)
        }
        input.report("libwebp", decoded.image)
        return ScaledStill(image: decoded.image, fullSize: decoded.fullSize, orientation: header.orientation,
                           colour: .embedded(EmbeddedProfile.webp(input.source)), plannedScale: plan.scale)
    }

    func pngDecode(_ input: MediaInput, _ requests: [ThumbnailRequest]) throws -> ScaledStill {
        let header = try StillHeader.read(input.source, type: .png)
        let plan = Self.plan(header, requests)
        let decoded = try PNGStreamDecoder.decode(input.source, scale: plan.scale, limits: input.limits)
        input.report("libpng", decoded.image)
        return ScaledStill(image: decoded.image, fullSize: decoded.fullSize, orientation: header.orientation,
                           colour: .embedded(decoded.profile), plannedScale: plan.scale)
    }

    func heifDecode(_ input: MediaInput, _ requests: [ThumbnailRequest]) throws -> ScaledStill {
        try input.source.withContiguousBytes {
            let decoded = try HEIFDecoder.decode($0, requests, limits: input.limits)
            input.report("libheif", decoded.still.image)
            return decoded.still
        }
    }

    /// The decode's plan in the stored grid, from a header's size and orientation (see `ScaledStill.decodePlan`).
    static func plan(_ header: StillHeader, _ requests: [ThumbnailRequest]) -> ThumbnailPlan {
        let full = Size(width: header.width, height: header.height)
        let display = header.orientation.swapsAxes ? full.transposed : full
        return ScaledStill.decodePlan(display: display, orientation: header.orientation, requests: requests)
    }
}
