/// The last step of every still-like path (stills, animation frames, HEIF): from a decoded image of the
/// whole source to the planned thumbnail, upright. Processing, so that codecs and pipelines share it
/// without calling into one another.
extension Resampler {
    /// Resamples a decoded image (the whole source at some scale) to the plan and turns it upright.
    package static func finish(_ image: Image, fullSize: Size, orientation: Orientation, request: ThumbnailRequest) -> Image {
        let display = orientation.swapsAxes ? fullSize.transposed : fullSize
        let plan = ThumbnailPlan.make(source: display, maxPixelSize: request.maxPixelSize, fit: request.fit,
                                      upscale: request.upscale).stored(for: orientation)
        return finish(image, fullSize: fullSize, orientation: orientation, plan: plan)
    }

    /// `plan` is in stored orientation; `image` shows the full source scaled to its own size.
    package static func finish(_ image: Image, fullSize: Size, orientation: Orientation, plan: ThumbnailPlan) -> Image {
        let sx = Double(image.width) / Double(fullSize.width), sy = Double(image.height) / Double(fullSize.height)
        let cropW = plan.cropWidth * sx, cropH = plan.cropHeight * sy
        let region = (x: (Double(image.width) - cropW) / 2, y: (Double(image.height) - cropH) / 2, width: cropW, height: cropH)
        let resized = (image.width == plan.output.width && image.height == plan.output.height && cropW == Double(image.width)
                       && cropH == Double(image.height))
            ? image : Resampler.resample(image, region: region, to: plan.output)
        return orientation.apply(to: resized)
    }
}
