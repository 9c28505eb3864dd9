/// How often each colour occurs, over 5 bits a channel (32,768 cells). Each cell also keeps its pixels'
/// channel sums, so a cell stands for the exact mean of its pixels rather than its corner. 1 MB, whatever
/// the number of frames counted.
package struct ColorHistogram {
    package static let bits = 5
    package static let cellCount = 1 << (3 * bits)
    package private(set) var counts = [Int](repeating: 0, count: cellCount)
    /// r, g, b sums per cell.
    package private(set) var sums = [Int](repeating: 0, count: 3 * cellCount)

    /// An empty histogram.
    package init() {}

    /// Counts every pixel of a packed RGB buffer.
    package mutating func add(rgb: UnsafeBufferPointer<UInt8>) {
        let shift = 8 - Self.bits
        counts.withUnsafeMutableBufferPointer { counts in
            sums.withUnsafeMutableBufferPointer { sums in
                var i = 0
                while i + 2 < rgb.count {
                    let r = Int(rgb[i]), g = Int(rgb[i + 1]), b = Int(rgb[i + 2])
                    let cell = (r >> shift) << (2 * Self.bits) | (g >> shift) << Self.bits | (b >> shift)
                    counts[cell] += 1
                    sums[3 * cell] += r
                    sums[3 * cell + 1] += g
                    sums[3 * cell + 2] += b
                    i += 3
                }
            }
        }
    }
}
