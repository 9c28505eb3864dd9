/// PNG's row filters (PNG specification, section 9), undone in place for 8-bit samples: the fast path
/// that inflates with ISA-L does what libpng's `png_read_row` does after inflating.
package enum PNGUnfilter {
    /// Undoes filter `type` on `row` (`count` bytes, filter-type byte excluded) given the unfiltered row
    /// above (`previous`, zeros for the first row); `bpp` bytes per pixel. Throws on an unknown type.
    @inline(__always)
    package static func apply(_ type: UInt8, row: UnsafeMutablePointer<UInt8>, previous: UnsafePointer<UInt8>, count: Int, bpp: Int) throws {
        switch type {
        case 0:
            return
        case 1:
            var i = bpp
            while i < count { row[i] &+= row[i - bpp]; i += 1 }
        case 2:
            for i in 0..<count { row[i] &+= previous[i] }
        case 3:
            for i in 0..<min(bpp, count) { row[i] &+= previous[i] >> 1 }
            var i = bpp
            while i < count {
                row[i] &+= UInt8(truncatingIfNeeded: (UInt16(row[i - bpp]) + UInt16(previous[i])) >> 1)
                i += 1
            }
        case 4:
            for i in 0..<min(bpp, count) { row[i] &+= previous[i] }
            var i = bpp
            while i < count {
                let a = Int32(row[i - bpp]), b = Int32(previous[i]), c = Int32(previous[i - bpp])
                let pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c)
                let predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                row[i] &+= UInt8(truncatingIfNeeded: predictor)
                i += 1
            }
        default:
            throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: "bad adaptive filter value \(type)", context: "IDAT")
        }
    }
}
