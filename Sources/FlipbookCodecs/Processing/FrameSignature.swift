import CFFmpeg

/// A frame's colour statistics from a grid of samples: per-channel histograms and spreads. Read straight
/// from a decoded frame's planes it costs a few microseconds, so poster selection can judge every frame
/// it decodes and scale only the one it keeps.
package struct FrameSignature {
    package static let bins = 32
    /// Most sample positions per axis.
    package static let grid = 64
    /// `bins` counts for each channel (Y, Cb, Cr or R, G, B), normalised to sum to 1 per channel.
    package private(set) var histogram: [Double]
    /// Standard deviation of each channel, in 8-bit levels.
    package private(set) var spreads: [Double]

    /// Black, white or one flat colour: no channel spreads by `threshold` levels or more. 5 levels in
    /// limited-range luma are ~6 in full-range RGB, the threshold used for rendered images.
    package func isUniform(threshold: Double = 5) -> Bool { spreads.allSatisfy { $0 < threshold } }

    /// Squared distance between two signatures' histograms.
    package func distance(to histogram: [Double]) -> Double {
        zip(self.histogram, histogram).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
    }

    /// The signature of a decoded frame in a planar 8- to 16-bit layout (every YUV and planar RGB format
    /// decoders produce); nil for packed, palette and hardware layouts.
    package init?(_ frame: UnsafeMutablePointer<AVFrame>) {
        guard let layout = PlanarLayout(frame.pointee.format) else { return nil }
        let (data, lines) = SwsScaler.planes(of: frame)
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        guard w > 0, h > 0 else { return nil }
        histogram = []
        spreads = []
        for c in layout.components.prefix(3) {
            let p = Int(c.plane)
            let (pw, ph) = layout.planeSize(p, width: w, height: h)
            guard let base = data[p] else { return nil }
            let stride = Int(lines[p]), depthShift = Int(c.depth) - 8
            if layout.step == 1 {
                add { x, y in Int(base[y * stride + x]) }
            } else {
                let words = UnsafeRawPointer(base)
                add { x, y in Int(words.load(fromByteOffset: y * stride + 2 * x, as: UInt16.self)) >> max(0, depthShift) }
            }
            func add(_ sample: (Int, Int) -> Int) { accumulate(width: pw, height: ph, sample) }
        }
    }

    /// The signature of `frame` from its planes or, for layouts without them, from `render()`'s image,
    /// which is returned so that a kept frame is not rendered twice.
    package static func of(_ frame: UnsafeMutablePointer<AVFrame>, render: () throws -> Image) throws -> (FrameSignature, Image?) {
        if let planar = FrameSignature(frame) { return (planar, nil) }
        let image = try render()
        return (FrameSignature(image: image), image)
    }

    /// The signature of a rendered RGB(A) image (its first three channels).
    package init(image: Image) {
        histogram = []
        spreads = []
        let c = image.channels
        image.pixels.withUnsafeBufferPointer { p in
            for channel in 0..<min(3, c) {
                accumulate(width: image.width, height: image.height) { x, y in Int(p[(y * image.width + x) * c + channel]) }
            }
        }
    }

    /// Adds one channel: a grid of up to `grid` x `grid` samples (every pixel of small frames).
    private mutating func accumulate(width: Int, height: Int, _ sample: (Int, Int) -> Int) {
        var counts = [Double](repeating: 0, count: Self.bins)
        let nx = min(width, Self.grid), ny = min(height, Self.grid)
        var sum = 0.0, sumSquares = 0.0
        for j in 0..<ny {
            let y = (2 * j + 1) * height / (2 * ny)
            for i in 0..<nx {
                let v = min(255, max(0, sample((2 * i + 1) * width / (2 * nx), y)))
                counts[v * Self.bins / 256] += 1
                sum += Double(v)
                sumSquares += Double(v * v)
            }
        }
        let n = Double(nx * ny)
        histogram += counts.map { $0 / n }
        let mean = sum / n
        spreads.append(max(0, sumSquares / n - mean * mean).squareRoot())
    }
}
