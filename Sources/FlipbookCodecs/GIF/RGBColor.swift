/// An 8-bit RGB colour.
struct RGBColor: Equatable, Sendable {
    var r: UInt8, g: UInt8, b: UInt8
}
