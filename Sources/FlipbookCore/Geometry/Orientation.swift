/// EXIF orientation (TIFF tag 274): how the stored pixels must be transformed to display upright.
package enum Orientation: Int, Sendable, CaseIterable {
    case up = 1, upMirrored = 2, down = 3, downMirrored = 4
    case leftMirrored = 5, right = 6, rightMirrored = 7, left = 8

    /// The orientation for a raw tag value; 0, missing or out-of-range values mean `.up`.
    package init(exifValue: Int?) {
        self = exifValue.flatMap(Orientation.init(rawValue:)) ?? .up
    }

    /// Orientations 5 to 8 display the stored width as height.
    package var swapsAxes: Bool { rawValue >= 5 }

    /// Returns `image` (stored pixels) transformed to display upright. Cost: one copy of the image.
    package func apply(to image: Image) -> Image {
        guard self != .up else { return image }
        let w = image.width, h = image.height, c = image.channels
        let outW = swapsAxes ? h : w, outH = swapsAxes ? w : h
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // (sx, sy): the stored pixel that displays at (x, y).
                        let sx: Int, sy: Int
                        switch self {
                        case .up: (sx, sy) = (x, y)
                        case .upMirrored: (sx, sy) = (w - 1 - x, y)
                        case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (sx, sy) = (x, h - 1 - y)
                        case .leftMirrored: (sx, sy) = (y, x)
                        case .right: (sx, sy) = (y, h - 1 - x)
                        case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case .left: (sx, sy) = (w - 1 - y, x)
                        }
                        let s = (sy * w + sx) * c, d = (y * outW + x) * c
                        for k in 0..<c { dst[d + k] = src[s + k] }
                    }
                }
            }
        }
        return Image(width: outW, height: outH, channels: c, pixels: out)
    }
}
