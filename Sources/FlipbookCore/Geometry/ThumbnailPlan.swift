/// The geometry of one thumbnail: what part of the source to take and the size it becomes. All in the
/// source's stored pixel grid or its displayed grid, as named; pure and table-tested.
package struct ThumbnailPlan: Equatable, Sendable {
    /// The output size, as displayed.
    package var output: Size
    /// The centred region of the displayed source that maps onto the output, in source pixels.
    package var cropWidth: Double
    package var cropHeight: Double
    /// Output pixels per source pixel (below 1 when shrinking).
    package var scale: Double

    /// Plans a thumbnail of a source that displays as `source` (after orientation).
    /// - `inside`: the longer side becomes `maxPixelSize`, aspect ratio kept, no side below 1 pixel.
    /// - `cover`: an `maxPixelSize` square taken from the centre.
    /// Without `upscale`, a source smaller than the box keeps its size (cover crops it to a square).
    package static func make(source: Size, maxPixelSize: Int, fit: Fit, upscale: Bool = false) -> ThumbnailPlan {
        let w = Double(max(1, source.width)), h = Double(max(1, source.height))
        let target = Double(max(1, maxPixelSize))
        switch fit {
        case .inside:
            var scale = target / max(w, h)
            if !upscale { scale = min(scale, 1) }
            let out = Size(width: max(1, Int((w * scale).rounded())), height: max(1, Int((h * scale).rounded())))
            return ThumbnailPlan(output: out, cropWidth: w, cropHeight: h, scale: scale)
        case .cover:
            let side = min(w, h)
            var scale = target / side
            if !upscale { scale = min(scale, 1) }
            let outSide = max(1, Int((side * scale).rounded()))
            let crop = Double(outSide) / scale
            return ThumbnailPlan(output: Size(width: outSide, height: outSide),
                                 cropWidth: min(w, crop), cropHeight: min(h, crop), scale: scale)
        }
    }

    /// The whole source (no crop) at `scale`: what one decode must cover when several thumbnails of different
    /// sizes and fits are cut from it. `output` is the source's size at that scale, rounded as `make` rounds.
    package static func whole(source: Size, scale: Double) -> ThumbnailPlan {
        let w = Double(max(1, source.width)), h = Double(max(1, source.height))
        return ThumbnailPlan(output: Size(width: max(1, Int((w * scale).rounded())), height: max(1, Int((h * scale).rounded()))),
                             cropWidth: w, cropHeight: h, scale: scale)
    }

    /// The same plan seen in the stored (pre-orientation) pixel grid, for orientations that swap axes.
    package func stored(for orientation: Orientation) -> ThumbnailPlan {
        guard orientation.swapsAxes else { return self }
        return ThumbnailPlan(output: output.transposed, cropWidth: cropHeight, cropHeight: cropWidth, scale: scale)
    }

    /// The shrink-on-load denominator-free factor: the smallest decode scale that still leaves at least a
    /// factor of two for the final resample (or the full size when less than that is needed).
    package func shrinkOnLoad(from available: [Double]) -> Double {
        let needed = min(1, 2 * scale)
        return available.filter { $0 >= needed - 1e-9 }.min() ?? 1
    }
}
