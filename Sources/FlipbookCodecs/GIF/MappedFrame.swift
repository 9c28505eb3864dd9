#if canImport(Glibc)
import Glibc
#endif

/// One frame's pixels for the GIF: the rectangle that changed, as palette indexes, with pixels inside
/// it that stay as they were set to the transparent index.
package struct MappedFrame {
    package var x: Int, y: Int, width: Int, height: Int
    package var indexes: [UInt8]
    package var usesTransparency: Bool

    package init(x: Int, y: Int, width: Int, height: Int, indexes: [UInt8], usesTransparency: Bool) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
        self.indexes = indexes
        self.usesTransparency = usesTransparency
    }
}
