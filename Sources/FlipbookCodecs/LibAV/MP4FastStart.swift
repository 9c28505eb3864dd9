/// Moves a finished MP4's index (`moov`) in front of its media data, as `-movflags +faststart` does, so a
/// browser can start playing before the whole file arrives.
///
/// Why not libavformat's `+faststart`: its second pass logs "Starting second pass: moving the moov atom to
/// the beginning of the file" at AV_LOG_INFO on the format context, which has no per-context log level, so
/// every MP4 Flipbook wrote printed a line on the host's standard error at libav's default level (and
/// libav's level is the host's to set, not ours). The file is in memory already; moving one box and adding
/// its size to each chunk offset (`stco`, `co64`) is the whole job.
package enum MP4FastStart {
    /// `bytes` with `moov` right after `ftyp` and every chunk offset moved by `moov`'s size; nil (the caller
    /// keeps the file as written, valid but index-last) if the layout is not the one libavformat writes or
    /// a 32-bit offset would overflow.
    package static func moveIndexToFront(_ bytes: [UInt8]) -> [UInt8]? {
        var boxes: [(type: String, range: Range<Int>)] = []
        var at = 0
        while at + 8 <= bytes.count {
            var size = Int(MP4Duration.read32(bytes, at))
            if size == 1, at + 16 <= bytes.count {
                size = Int(UInt64(MP4Duration.read32(bytes, at + 8)) << 32 | UInt64(MP4Duration.read32(bytes, at + 12)))
            }
            guard size >= 8, at + size <= bytes.count else { return nil }
            boxes.append((String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self), at..<(at + size)))
            at += size
        }
        guard at == bytes.count, let moovIndex = boxes.firstIndex(where: { $0.type == "moov" }),
              let mdatIndex = boxes.firstIndex(where: { $0.type == "mdat" }) else { return nil }
        if moovIndex < mdatIndex { return bytes }  // already in front
        let insertAt = boxes.firstIndex(where: { $0.type == "ftyp" }).map { boxes[$0].range.upperBound } ?? 0
        let moov = boxes[moovIndex].range
        var index = Array(bytes[moov])
        guard shiftChunkOffsets(in: &index, by: moov.count) else { return nil }
        return Array(bytes[0..<insertAt]) + index + Array(bytes[insertAt..<moov.lowerBound]) + Array(bytes[moov.upperBound...])
    }

    /// Adds `shift` to every entry of every track's `stco` and `co64` in `moov` (the whole box).
    private static func shiftChunkOffsets(in moov: inout [UInt8], by shift: Int) -> Bool {
        guard let body = MP4Duration.child(of: 0..<moov.count, named: "moov", in: moov) else { return false }
        var start = body.lowerBound
        while let trak = MP4Duration.child(of: start..<body.upperBound, named: "trak", in: moov) {
            guard let mdia = MP4Duration.child(of: trak, named: "mdia", in: moov),
                  let minf = MP4Duration.child(of: mdia, named: "minf", in: moov),
                  let stbl = MP4Duration.child(of: minf, named: "stbl", in: moov) else { return false }
            if let stco = MP4Duration.child(of: stbl, named: "stco", in: moov) {
                let count = Int(MP4Duration.read32(moov, stco.lowerBound + 4))
                guard stco.lowerBound + 8 + count * 4 <= stco.upperBound else { return false }
                for i in 0..<count {
                    let at = stco.lowerBound + 8 + i * 4
                    let moved = UInt64(MP4Duration.read32(moov, at)) + UInt64(shift)
                    guard moved <= UInt64(UInt32.max) else { return false }
                    for b in 0..<4 { moov[at + b] = UInt8(truncatingIfNeeded: moved >> (24 - 8 * UInt64(b))) }
                }
            } else if let co64 = MP4Duration.child(of: stbl, named: "co64", in: moov) {
                let count = Int(MP4Duration.read32(moov, co64.lowerBound + 4))
                guard co64.lowerBound + 8 + count * 8 <= co64.upperBound else { return false }
                for i in 0..<count {
                    let at = co64.lowerBound + 8 + i * 8
                    let old = UInt64(MP4Duration.read32(moov, at)) << 32 | UInt64(MP4Duration.read32(moov, at + 4))
                    let moved = old + UInt64(shift)
                    for b in 0..<8 { moov[at + b] = UInt8(truncatingIfNeeded: moved >> (56 - 8 * UInt64(b))) }
                }
            } else {
                return false
            }
            start = trak.upperBound
        }
        return true
    }
}
