/// Downscaling of composited canvases, shared by everything that consumes a `FrameSource`.
public enum FrameScaling {
    /// The canvas (RGBA, `info.width` x `info.height`) resampled so its longer side is `maxPixelSize`, or
    /// nil when no scaling is needed (no size, or the canvas already fits). The same plan and Lanczos
    /// resampler as GIFDecoder's own `maxPixelSize`. Costs one copy of the canvas and one output image.
    public static func scaled(_ canvas: UnsafeBufferPointer<UInt8>, info: AnimationInfo, maxPixelSize: Int?) -> Image? {
        guard let size = maxPixelSize, size < max(info.width, info.height) else { return nil }
        let full = Image(width: info.width, height: info.height, channels: 4, pixels: Array(canvas))
        let plan = ThumbnailPlan.make(source: Size(width: info.width, height: info.height), maxPixelSize: size, fit: .inside)
        return Resampler.resample(full, region: (0, 0, Double(info.width), Double(info.height)), to: plan.output)
    }
}

extension FrameScaling {
    /// The canvas as an `Image` (RGBA), scaled down to `maxPixelSize` if that is smaller. One copy.
    public static func image(_ canvas: UnsafeBufferPointer<UInt8>, info: AnimationInfo, maxPixelSize: Int?) -> Image {
        scaled(canvas, info: info, maxPixelSize: maxPixelSize)
            ?? Image(width: info.width, height: info.height, channels: 4, pixels: Array(canvas))
    }
}
