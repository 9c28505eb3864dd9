/// An APNG's structure from its chunk headers: IHDR, PLTE/tRNS, acTL, and each frame's fcTL with where its
/// image data lies (IDAT or fdAT chunks). Reads 8 bytes a chunk plus the small control chunks; pixel data
/// is only located, never read, so a scan costs a few kilobytes of I/O whatever the file size.
package struct APNGStructure {
    package enum Dispose: UInt8 { case none = 0, background = 1, previous = 2 }
    package enum Blend: UInt8 { case source = 0, over = 1 }

    package struct Frame {
        package var width: Int, height: Int, x: Int, y: Int
        /// Stored delay in ms (delay_num / delay_den s, a zero denominator meaning 1/100 s).
        package var delayMs: Int
        package var dispose: Dispose
        package var blend: Blend
        /// Byte ranges of the zlib stream in the file (fdAT's sequence number already skipped).
        package var data: [Range<Int>] = []
    }

    package var width = 0, height = 0
    /// IHDR's bytes 8-12: bit depth, colour type, compression, filter, interlace.
    package var format: [UInt8] = []
    /// PLTE and tRNS chunks, whole (length, type, data, CRC), copied into each frame's PNG.
    package var sharedChunks: [[UInt8]] = []
    package var hasTransparency = false
    package var declaredFrames = 0
    /// acTL num_plays: 0 forever.
    package var plays = 0
    package var frames: [Frame] = []
    /// Why the scan stopped before IEND, if it did.
    package var truncation: String?
    /// Whether the IDAT image is the animation's first frame (an fcTL came before it).
    package var defaultImageIsFirstFrame = false

    package static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    package static func be32(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }

    /// Walks the chunks. Throws for a damaged header; data that ends early ends the scan with `truncation`.
    package static func scan(_ source: any ByteSource, maxFrames: Int) throws -> APNGStructure {
        var s = APNGStructure()
        guard try source.bytes(at: 0, length: 8) == signature else { throw FlipbookError(.corrupt, "not a PNG signature") }
        var offset = 8
        var current: Frame?
        var seenIDAT = false, seenFcTL = false, seenIHDR = false
        while true {
            let header = try source.bytes(at: offset, length: 8)
            guard header.count == 8 else { s.truncation = "the file ends before IEND"; break }
            let length = be32(header, 0)
            let type = String(decoding: header[4..<8], as: UTF8.self)
            let dataStart = offset + 8
            guard length <= 0x7FFF_FFFF, dataStart + length + 4 <= source.count else {
                s.truncation = "the \(type) chunk at byte \(offset) runs past the end of the file"
                break
            }
            func body(_ max: Int) throws -> [UInt8] { try source.bytes(at: dataStart, length: min(length, max)) }
            switch type {
            case "IHDR":
                let b = try body(13)
                guard b.count == 13 else { throw FlipbookError(.corrupt, "PNG IHDR is \(length) bytes, not 13") }
                s.width = be32(b, 0)
                s.height = be32(b, 4)
                s.format = Array(b[8..<13])
                s.hasTransparency = b[9] & 4 != 0
                seenIHDR = true
            case "PLTE", "tRNS":
                guard length <= 1024 else { throw FlipbookError(.corrupt, "PNG \(type) chunk is \(length) bytes") }
                s.sharedChunks.append(try source.bytes(at: offset, length: length + 12))
                if type == "tRNS" { s.hasTransparency = true }
            case "acTL":
                let b = try body(8)
                guard b.count == 8 else { throw FlipbookError(.corrupt, "APNG acTL is \(length) bytes, not 8") }
                s.declaredFrames = be32(b, 0)
                s.plays = be32(b, 4)
            case "fcTL":
                let b = try body(26)
                guard b.count == 26 else { throw FlipbookError(.corrupt, "APNG fcTL is \(length) bytes, not 26") }
                if let done = current { s.frames.append(done) }
                guard s.frames.count < maxFrames else {
                    throw FlipbookError(.limitExceeded, "APNG has more than \(maxFrames) frames")
                }
                let num = Int(b[20]) << 8 | Int(b[21]), den = Int(b[22]) << 8 | Int(b[23])
                let divisor = den == 0 ? 100 : den
                current = Frame(width: be32(b, 4), height: be32(b, 8), x: be32(b, 12), y: be32(b, 16),
                                delayMs: (num * 1000 + divisor / 2) / divisor,
                                dispose: Dispose(rawValue: b[24]) ?? .none, blend: Blend(rawValue: b[25]) ?? .source)
                seenFcTL = true
            case "IDAT":
                if !seenIDAT { s.defaultImageIsFirstFrame = seenFcTL }
                seenIDAT = true
                if s.defaultImageIsFirstFrame { current?.data.append(dataStart..<(dataStart + length)) }
            case "fdAT":
                guard length > 4 else { break }
                current?.data.append((dataStart + 4)..<(dataStart + length))
            case "IEND":
                if let done = current { s.frames.append(done) }
                current = nil
            default:
                break
            }
            if type == "IEND" { break }
            offset = dataStart + length + 4
        }
        // A frame cut short by the end of the file is left out; the frames before it stand.
        guard seenIHDR, s.width > 0, s.height > 0 else { throw FlipbookError(.corrupt, "PNG has no valid IHDR") }
        return s
    }

    /// A standalone PNG of one frame: IHDR at the frame's size, the shared palette chunks, its image data
    /// as IDAT, IEND. libavcodec's PNG decoder turns it into pixels.
    package func png(for frame: Frame, source: any ByteSource) throws -> [UInt8] {
        var out = Self.signature
        var ihdr: [UInt8] = []
        Self.append32(frame.width, to: &ihdr)
        Self.append32(frame.height, to: &ihdr)
        ihdr += format
        Self.appendChunk("IHDR", ihdr, to: &out)
        for chunk in sharedChunks { out += chunk }
        var data: [UInt8] = []
        data.reserveCapacity(frame.data.reduce(0) { $0 + $1.count })
        for range in frame.data {
            let part = try source.bytes(at: range.lowerBound, length: range.count)
            guard part.count == range.count else { throw FlipbookError(.truncated, "APNG frame data ends early") }
            data += part
        }
        Self.appendChunk("IDAT", data, to: &out)
        Self.appendChunk("IEND", [], to: &out)
        return out
    }

    package static func append32(_ v: Int, to out: inout [UInt8]) {
        out += [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    package static func appendChunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
        append32(data.count, to: &out)
        let typed = Array(type.utf8) + data
        out += typed
        append32(Int(CRC32.checksum(typed)), to: &out)
    }
}
