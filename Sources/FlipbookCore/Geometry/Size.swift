/// A width and height in pixels.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// A size; neither side is checked.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
    public var transposed: Size { Size(width: height, height: width) }
    public var pixelCount: Int { width * height }
}
