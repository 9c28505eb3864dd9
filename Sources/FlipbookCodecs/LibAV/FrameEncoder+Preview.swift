extension FrameEncoder {
    /// An RGB image of the encoder's size, padded to even dimensions by repeating its last column and row, and
    /// followed by the slack swscale's SIMD reads need.
    package func padded(_ image: Image) throws -> [UInt8] {
        guard image.width == width, image.height == height else {
            throw FlipbookError(.codec, "frame size changed from \(width)x\(height) to \(image.width)x\(image.height)")
        }
        let rgba = image.withAlpha()
        return rgba.pixels.withUnsafeBufferPointer { flatten($0) }
    }
}
