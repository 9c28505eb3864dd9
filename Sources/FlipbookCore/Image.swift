/// An 8-bit interleaved image: RGB (3 channels) or RGBA (4, straight alpha), rows packed without padding.
/// Costs width x height x channels bytes.
public struct Image: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// 3 (RGB) or 4 (RGBA).
    public var channels: Int
    /// Rows top to bottom, `channels` bytes a pixel, no padding.
    public var pixels: [UInt8]
    /// The ICC profile the pixels are in, when a request keeps the source's (`keepProfile`); nil means sRGB.
    /// Encoders embed it. Operations that make a new image do not carry it: the pipeline sets it last.
    public var iccProfile: [UInt8]?
    /// What the decoder recovered from, in its own words: a JPEG cut short is decoded as far as it goes (the
    /// rest grey), as browsers and libvips show it, with libjpeg's "Premature end of JPEG file" here. Like
    /// `iccProfile`, operations that make a new image do not carry it: the pipeline sets it last.
    public var warnings: [String] = []

    /// An image over `pixels` (`width` x `height` x `channels` bytes, rows top to bottom, no padding).
    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(channels == 3 || channels == 4, "Image supports RGB and RGBA")
        precondition(pixels.count == width * height * channels, "pixel buffer does not match the size")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// A blank (zeroed) image.
    public init(width: Int, height: Int, channels: Int) {
        self.init(width: width, height: height, channels: channels,
                  pixels: [UInt8](repeating: 0, count: width * height * channels))
    }

    /// Whether there are four channels.
    public var hasAlpha: Bool { channels == 4 }

    /// True if some pixel is not fully opaque.
    public var hasTransparentPixels: Bool {
        guard channels == 4 else { return false }
        return pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return true }
                i += 4
            }
            return false
        }
    }

    /// This image composited onto an opaque background, as RGB.
    public func flattened(onto background: (r: UInt8, g: UInt8, b: UInt8) = (255, 255, 255)) -> Image {
        guard channels == 4 else { return self }
        var out = [UInt8](repeating: 0, count: width * height * 3)
        let bg = [Int(background.r), Int(background.g), Int(background.b)]
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for i in 0..<(width * height) {
                    let a = Int(src[i * 4 + 3])
                    for c in 0..<3 {
                        dst[i * 3 + c] = UInt8((Int(src[i * 4 + c]) * a + bg[c] * (255 - a) + 127) / 255)
                    }
                }
            }
        }
        return Image(width: width, height: height, channels: 3, pixels: out)
    }

    /// This image with an alpha channel (opaque where there was none).
    public func withAlpha() -> Image {
        guard channels == 3 else { return self }
        var out = [UInt8](repeating: 255, count: width * height * 4)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for i in 0..<(width * height) {
                    dst[i * 4] = src[i * 3]
                    dst[i * 4 + 1] = src[i * 3 + 1]
                    dst[i * 4 + 2] = src[i * 3 + 2]
                }
            }
        }
        return Image(width: width, height: height, channels: 4, pixels: out)
    }
}
