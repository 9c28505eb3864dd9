/// A width and height in pixels.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// A size; neither side is checked.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// "WxH".
    public var description: String { "\(width)x\(height)" }
    /// Width and height swapped (for a 90 or 270 degree orientation).
    public var transposed: Size { Size(width: height, height: width) }
    /// width x height.
    public var pixelCount: Int { width * height }
}
