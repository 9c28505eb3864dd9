/// An 8-bit RGB colour.
package struct RGBColor: Equatable, Sendable {
    package var r: UInt8, g: UInt8, b: UInt8

    package init(r: UInt8, g: UInt8, b: UInt8) { (self.r, self.g, self.b) = (r, g, b) }
}
