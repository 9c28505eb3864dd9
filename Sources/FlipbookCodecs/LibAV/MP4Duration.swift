/// Sets a finished MP4's presentation length (the movie header, the track and media headers and the edit
/// list) in place.
///
/// Why: with B-frames the last packet decoded is not the last frame shown. libavformat's MP4 muxer takes the
/// media's end (stts) from the last decoded packet, and the edit list's end and the media header's duration
/// (`mdhd`) from the latest `pts + duration`, all from packet durations. Giving the last decoded packet
/// enough duration that the media covers the GIF's end also pushes the others past it; this puts them back
/// at exactly the GIF's end. Only fixed-size fields change, so no offset in the file moves. Costs one walk
/// over the `moov` boxes.
package enum MP4Duration {
    /// Rewrites mvhd, every tkhd and mdhd and the single-entry elst of `bytes` to `milliseconds`. Returns false
    /// (and changes nothing) when the layout is not the one libavformat writes for one video track.
    @discardableResult
    package static func set(_ bytes: inout [UInt8], milliseconds: Int) -> Bool {
        guard let moov = child(of: 0..<bytes.count, named: "moov", in: bytes),
              let mvhd = child(of: moov, named: "mvhd", in: bytes) else { return false }
        let mvhdVersion = bytes[mvhd.lowerBound]
        let timescaleAt = mvhd.lowerBound + (mvhdVersion == 1 ? 20 : 12)
        guard timescaleAt + 4 <= mvhd.upperBound else { return false }
        let timescale = Int(read32(bytes, timescaleAt))
        guard timescale > 0 else { return false }
        let duration = UInt64(milliseconds) * UInt64(timescale) / 1000
        var patches: [(at: Int, wide: Bool, value: UInt64)] = [(timescaleAt + 4, mvhdVersion == 1, duration)]
        var start = moov.lowerBound
        while let trak = child(of: start..<moov.upperBound, named: "trak", in: bytes) {
            if let tkhd = child(of: trak, named: "tkhd", in: bytes) {
                let wide = bytes[tkhd.lowerBound] == 1
                patches.append((tkhd.lowerBound + (wide ? 28 : 20), wide, duration))
            }
            if let mdia = child(of: trak, named: "mdia", in: bytes), let mdhd = child(of: mdia, named: "mdhd", in: bytes) {
                let wide = bytes[mdhd.lowerBound] == 1
                let scaleAt = mdhd.lowerBound + (wide ? 20 : 12)
                guard scaleAt + (wide ? 12 : 8) <= mdhd.upperBound else { return false }
                let mediaScale = UInt64(read32(bytes, scaleAt))
                patches.append((scaleAt + 4, wide, UInt64(milliseconds) * mediaScale / 1000))
            }
            if let edts = child(of: trak, named: "edts", in: bytes), let elst = child(of: edts, named: "elst", in: bytes) {
                let wide = bytes[elst.lowerBound] == 1
                guard read32(bytes, elst.lowerBound + 4) == 1 else { return false }  // one segment, as written
                patches.append((elst.lowerBound + 8, wide, duration))
            }
            start = trak.upperBound
        }
        for patch in patches where patch.at + (patch.wide ? 8 : 4) > bytes.count { return false }
        for patch in patches {
            if patch.wide {
                for i in 0..<8 { bytes[patch.at + i] = UInt8(truncatingIfNeeded: patch.value >> (56 - 8 * UInt64(i))) }
            } else {
                let value = UInt32(min(patch.value, UInt64(UInt32.max)))
                for i in 0..<4 { bytes[patch.at + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
            }
        }
        return true
    }

    /// The payload range of the first box named `name` directly inside `range` (which holds whole boxes; for a
    /// full box the payload starts at its version byte).
    static func child(of range: Range<Int>, named name: String, in bytes: [UInt8]) -> Range<Int>? {
        let want = Array(name.utf8)
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(read32(bytes, at))
            var header = 8
            if size == 1, at + 16 <= range.upperBound {
                size = Int(UInt64(read32(bytes, at + 8)) << 32 | UInt64(read32(bytes, at + 12)))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, at + size <= range.upperBound else { return nil }
            if Array(bytes[(at + 4)..<(at + 8)]) == want { return (at + header)..<(at + size) }
            at += size
        }
        return nil
    }

    static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
