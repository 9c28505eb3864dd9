/// What a GIF's first frame says about how it was made, measured in process before the encoder is opened:
/// `GIFTuning` picks its settings from it.
///
/// Flatness is the share of horizontally adjacent pixel pairs that are exactly equal (RGBA). Drawn GIFs
/// (logos, pixel art, stickers, screen recordings, LED signs) repeat a colour along a row almost everywhere
/// (0.89-1.00 on the bench's), shaded ones (rendered cogs, flags, a lit globe: gradients over flat areas)
/// half the time or more (0.5-0.85), photographic ones dithered to 256 colours rarely (0.10-0.40).
struct GIFContent: Sendable, Equatable {
    /// Equal horizontal neighbours over all horizontal neighbour pairs measured, 0 to 1.
    var flatness: Double

    /// The largest number of rows measured: above it rows are sampled evenly, so a large first frame costs
    /// no more than a ~1,024-row one.
    static let maxRows = 1_024

    /// Measures `rgba` (`width` x `height`, 4 bytes a pixel, rows packed).
    init(rgba: UnsafeBufferPointer<UInt8>, width: Int, height: Int) {
        precondition(rgba.count >= width * height * 4)
        guard width > 1, height > 0 else {
            flatness = 1
            return
        }
        let step = max(1, height / GIFContent.maxRows)
        let bytes = UnsafeRawBufferPointer(rgba)
        var equal = 0, pairs = 0
        var y = 0
        while y < height {
            let row = y * width * 4
            var previous = bytes.loadUnaligned(fromByteOffset: row, as: UInt32.self)
            for x in 1..<width {
                let pixel = bytes.loadUnaligned(fromByteOffset: row + x * 4, as: UInt32.self)
                if pixel == previous { equal += 1 }
                previous = pixel
            }
            pairs += width - 1
            y += step
        }
        flatness = Double(equal) / Double(pairs)
    }
}
