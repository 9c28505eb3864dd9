/// Crops, shared by the still and video paths (geometry belongs to the core, not to a pipeline).
extension Image {
    /// The centred `size` region (the whole image if it is not larger).
    package func croppedCentre(to size: Size) -> Image {
        let w = min(size.width, width), h = min(size.height, height)
        return cropped(x: (width - w) / 2, y: (height - h) / 2, width: w, height: h)
    }

    /// The `width` x `height` region at the top left corner.
    package func croppedTopLeft(width: Int, height: Int) -> Image {
        cropped(x: 0, y: 0, width: width, height: height)
    }

    /// The `width` x `height` region at (`x`, `y`), which must lie inside the image. Cost: one copy of the region.
    package func cropped(x: Int, y: Int, width: Int, height: Int) -> Image {
        let image = self
        guard width != image.width || height != image.height else { return image }
        let c = image.channels
        var out = [UInt8]()
        out.reserveCapacity(width * height * c)
        for row in y..<(y + height) {
            let start = (row * image.width + x) * c
            out.append(contentsOf: image.pixels[start..<(start + width * c)])
        }
        return Image(width: width, height: height, channels: c, pixels: out)
    }
}
