/// Every frame's delay, read from a GIF's block headers alone, before it is decoded.
///
/// Why not `GIFDecoder.info`: giflib's scan copies every byte of the image data, so a conversion that
/// needs the delays up front (`GIFToVideo`'s constant rate) would read the file twice. This walks the
/// blocks and reads only their headers and the length byte of each image data sub-block: about one byte in
/// 255 of the pixel data, one small read each (sample_big.gif, 751 KB: ~3,000 one-byte reads).
package enum GIFDelayScan {
    /// Raw delays in centiseconds, one per image, in order. nil when the blocks do not parse cleanly to the
    /// trailer (damaged or truncated files are left to the decoder, which says why) or hold more than
    /// `maxFrames` images.
    package static func delays(_ source: any ByteSource, maxFrames: Int) -> [Int]? {
        var reader = Reader(source: source)
        guard let header = reader.take(13), header.starts(with: Array("GIF".utf8)) else { return nil }
        if header[10] & 0x80 != 0 { reader.at += 3 << (Int(header[10] & 7) + 1) }  // the global colour table
        var delays: [Int] = []
        var delay = 0  // a Graphic Control Extension applies to the next image only
        while let introducer = reader.take(1)?.first {
            switch introducer {
            case 0x21:  // extension: a label, then sub-blocks
                guard let label = reader.take(1)?.first else { return nil }
                if label == 0xF9 {  // read as the decoder reads it
                    guard let size = reader.take(1)?.first, let body = reader.take(Int(size)),
                          let control = GIFDecoder.GraphicControl(code: Int(label), blocks: [body]) else { return nil }
                    delay = control.delay
                }
                guard reader.skipSubBlocks() else { return nil }
            case 0x2C:  // image: a descriptor, a local colour table, the LZW code size, then sub-blocks
                guard delays.count < maxFrames, let descriptor = reader.take(9) else { return nil }
                if descriptor[8] & 0x80 != 0 { reader.at += 3 << (Int(descriptor[8] & 7) + 1) }
                reader.at += 1
                guard reader.skipSubBlocks() else { return nil }
                delays.append(delay)
                delay = 0
            case 0x3B:
                return delays
            default:
                return nil
            }
        }
        return nil  // no trailer
    }

    private struct Reader {
        let source: any ByteSource
        var at = 0

        /// The next `count` bytes, or nil if the source ends first (or a read fails).
        mutating func take(_ count: Int) -> [UInt8]? {
            guard at >= 0, count <= source.count - at, let bytes = try? source.bytes(at: at, length: count), bytes.count == count
            else { return nil }
            at += count
            return bytes
        }

        /// Skips sub-blocks up to and including the zero-length terminator; false if the source ends first.
        mutating func skipSubBlocks() -> Bool {
            while let length = take(1)?.first {
                if length == 0 { return true }
                at += Int(length)
            }
            return false
        }
    }
}
