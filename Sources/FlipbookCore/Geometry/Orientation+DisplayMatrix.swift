#if canImport(Glibc)
import Glibc
#endif

/// A video's display matrix as an EXIF orientation: geometry, so it lives in the core; the video stages only
/// read the matrix from the container.
extension Orientation {
    /// libav's display matrix [a b u; c d v; x y w] maps a stored pixel (p, q) to (a p + c q, b p + d q).
    /// A negative determinant is a mirror: the matrix is then a rotation followed by a horizontal flip
    /// (av_display_matrix_flip negates column 0), so the rotation is read from the matrix with column 0
    /// negated back. Quarter turns clockwise, then the flip, are EXIF orientations 1-8; anything else
    /// (not nine values, a degenerate matrix, an angle between quarter turns) is `.up`.
    package init(displayMatrix: [Int32]) {
        var matrix = displayMatrix
        guard matrix.count == 9 else { self = .up; return }
        let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
        let mirrored = determinant < 0
        if mirrored { for i in [0, 3, 6] { matrix[i] = 0 &- matrix[i] } }
        guard let ccw = Self.rotationDegrees(displayMatrix: matrix) else { self = .up; return }
        let clockwise = (Int((-ccw).rounded()) % 360 + 360) % 360
        switch (clockwise, mirrored) {
        case (90, false): self = .right
        case (180, false): self = .down
        case (270, false): self = .left
        case (0, true): self = .upMirrored
        case (90, true): self = .leftMirrored  // transpose
        case (180, true): self = .downMirrored  // a vertical flip
        case (270, true): self = .rightMirrored  // transverse
        default: self = .up
        }
    }

    /// The counter-clockwise rotation of a display matrix in degrees, (-180, 180], as libavutil's
    /// `av_display_rotation_get` computes it (a..d are 16.16 fixed point); nil for a degenerate matrix.
    package static func rotationDegrees(displayMatrix m: [Int32]) -> Double? {
        guard m.count == 9 else { return nil }
        func fixed(_ v: Int32) -> Double { Double(v) / Double(1 << 16) }
        let scale0 = hypot(fixed(m[0]), fixed(m[3])), scale1 = hypot(fixed(m[1]), fixed(m[4]))
        guard scale0 != 0, scale1 != 0 else { return nil }
        let rotation = atan2(fixed(m[1]) / scale1, fixed(m[0]) / scale0) * 180 / Double.pi
        return -rotation
    }
}
