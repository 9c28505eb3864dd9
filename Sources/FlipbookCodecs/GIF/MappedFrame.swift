#if canImport(Glibc)
import Glibc
#endif

/// One frame's pixels for the GIF: the rectangle that changed, as palette indexes, with pixels inside
/// it that stay as they were set to the transparent index.
struct MappedFrame {
    var x: Int, y: Int, width: Int, height: Int
    var indexes: [UInt8]
    var usesTransparency: Bool
}
