import CFFmpeg

/// The few facts of the WebP container (RIFF) the encoder needs.
package enum WebPAnimation {
    /// Offsets of the ANMF chunks' payloads in a RIFF WebP file.
    package static func frameOffsets(_ data: [UInt8]) throws -> [Int] {
        func fourCC(_ at: Int) -> String { String(decoding: data[at..<(at + 4)], as: UTF8.self) }
        guard data.count >= 12, fourCC(0) == "RIFF", fourCC(8) == "WEBP" else {
            throw FlipbookError(.codec, "the WebP muxer did not produce a RIFF WebP file")
        }
        var offsets: [Int] = [], at = 12
        while at + 8 <= data.count {
            let size = Int(data[at + 4]) | Int(data[at + 5]) << 8 | Int(data[at + 6]) << 16 | Int(data[at + 7]) << 24
            guard at + 8 + size <= data.count else { throw FlipbookError(.codec, "the WebP muxer wrote a truncated \(fourCC(at)) chunk") }
            if fourCC(at) == "ANMF" {
                guard size >= 16 else { throw FlipbookError(.codec, "the WebP muxer wrote a short ANMF chunk") }
                offsets.append(at + 8)
            }
            at += 8 + size + (size & 1)  // chunks are padded to even sizes
        }
        return offsets
    }

    /// A frame's duration: 24 bits little-endian at byte 12 of its ANMF payload.
    package static func duration(_ data: [UInt8], frameAt offset: Int) -> Int {
        Int(data[offset + 12]) | Int(data[offset + 13]) << 8 | Int(data[offset + 14]) << 16
    }

    /// Sets the last frame's duration so the animation ends at `endMs`; returns the number of frames
    /// (1 for a still, which libwebp makes of a one-frame animation).
    package static func setLastFrameEnd(_ data: inout [UInt8], endMs: Int) throws -> Int {
        let frames = try frameOffsets(data)
        guard let last = frames.last else { return 1 }
        let start = frames.dropLast().reduce(0) { $0 + duration(data, frameAt: $1) }
        let length = endMs - start
        guard length > 0, length < 1 << 24 else {
            throw FlipbookError(.codec, "the WebP's frames end at \(start) ms, not before the clip's end at \(endMs) ms")
        }
        data[last + 12] = UInt8(length & 0xFF)
        data[last + 13] = UInt8(length >> 8 & 0xFF)
        data[last + 14] = UInt8(length >> 16)
        return frames.count
    }
}
