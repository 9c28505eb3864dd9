import CISAL

/// A PNG's image data (the IDAT chunks, read from the source in 64 KiB pieces) inflated by ISA-L: each
/// chunk's CRC and the zlib stream's Adler-32 are checked as libpng checks them. Starts at the first IDAT
/// chunk's payload, whose header libpng's `png_read_info` has just consumed.
package final class IDATInflater {
    private let source: any ByteSource
    /// The next byte of the current chunk's payload to read, and how many of it are left.
    private var offset: Int
    private var remaining: Int
    private var crc: UInt32
    private let input: UnsafeMutableRawBufferPointer
    private let state: UnsafeMutablePointer<inflate_state>
    /// The zlib stream ended (all of the image data is out).
    package private(set) var finished = false

    private static let idat: [UInt8] = Array("IDAT".utf8)

    /// `offset`: the payload of the first IDAT chunk, which holds `length` bytes.
    package init(source: some ByteSource, offset: Int, length: Int) {
        self.source = source
        self.offset = offset
        remaining = length
        crc = Self.idat.withUnsafeBufferPointer { crc32_gzip_refl(0, $0.baseAddress, 4) }
        input = .allocate(byteCount: 64 << 10, alignment: 64)
        state = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_ZLIB)
    }

    deinit {
        input.deallocate()
        state.deallocate()
    }

    /// Refills ISA-L's input from the current chunk, or from the next IDAT chunk after checking this one's
    /// CRC. False when no IDAT data is left.
    private func refill() throws -> Bool {
        while remaining == 0 {
            let tail = try source.bytes(at: offset, length: 12)
            guard tail.count >= 4 else { throw FlipbookError(.truncated, "PNG data ends early", context: "IDAT") }
            let stored = UInt32(tail[0]) << 24 | UInt32(tail[1]) << 16 | UInt32(tail[2]) << 8 | UInt32(tail[3])
            guard stored == crc else { throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: "IDAT: CRC error", context: "IDAT") }
            // A PNG goes on to IEND: a file ending here was cut. IDAT chunks are consecutive: anything
            // else after one ends the image data.
            guard tail.count == 12 else { throw FlipbookError(.truncated, "PNG data ends early", context: "IDAT") }
            guard Array(tail[8..<12]) == Self.idat else { return false }
            let length = Int(tail[4]) << 24 | Int(tail[5]) << 16 | Int(tail[6]) << 8 | Int(tail[7])
            guard length <= 0x7fff_ffff else { throw FlipbookError(.corrupt, "PNG chunk length out of range", context: "IDAT") }
            offset += 12
            remaining = length
            crc = Self.idat.withUnsafeBufferPointer { crc32_gzip_refl(0, $0.baseAddress, 4) }
        }
        let wanted = min(remaining, input.count)
        let got = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]), at: offset)
        guard got == wanted else { throw FlipbookError(.truncated, "PNG data ends early", context: "IDAT") }
        let base = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        crc = crc32_gzip_refl(crc, base, UInt64(got))
        offset += got
        remaining -= got
        state.pointee.next_in = base
        state.pointee.avail_in = UInt32(got)
        return true
    }

    /// Fills `output` with inflated bytes. Returns how many: fewer than asked only when the stream ended.
    package func inflate(into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = output.baseAddress else { return 0 }
        state.pointee.next_out = base.assumingMemoryBound(to: UInt8.self)
        state.pointee.avail_out = UInt32(output.count)
        while state.pointee.avail_out > 0, !finished {
            if state.pointee.avail_in == 0, try !refill() {
                throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: "Not enough image data", context: "IDAT")
            }
            let status = isal_inflate(state)
            guard status >= 0 else {
                throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: Self.describe(status), context: "IDAT")
            }
            finished = state.pointee.block_state == ISAL_BLOCK_FINISH
        }
        return output.count - Int(state.pointee.avail_out)
    }

    /// After the last row: the rest of the zlib stream (its Adler-32) and the last chunk's CRC, as libpng
    /// finishes the image data. As there, problems past the last row are only warnings (ignored), except
    /// a CRC error in the IDAT chunk the stream ends in.
    package func finish() throws {
        var scratch = [UInt8](repeating: 0, count: 4096)
        do {
            while !finished, try scratch.withUnsafeMutableBytes({ try inflate(into: $0) }) > 0 {}
        } catch {
            return
        }
        guard remaining == 0, let stored = try? source.bytes(at: offset, length: 4), stored.count == 4 else { return }
        let value = UInt32(stored[0]) << 24 | UInt32(stored[1]) << 16 | UInt32(stored[2]) << 8 | UInt32(stored[3])
        guard value == crc else { throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: "IDAT: CRC error", context: "IDAT") }
    }

    private static func describe(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: "invalid deflate block"
        case ISAL_INVALID_SYMBOL: "invalid deflate symbol"
        case ISAL_INVALID_LOOKBACK: "invalid deflate distance"
        case ISAL_INVALID_WRAPPER, ISAL_UNSUPPORTED_METHOD: "invalid zlib header"
        case ISAL_INCORRECT_CHECKSUM: "incorrect data check"
        default: "inflate error \(status)"
        }
    }
}
