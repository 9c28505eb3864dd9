/// The JPEG path streams the entropy-coded data; only the segments before the first scan (EXIF, ICC
/// profile, Adobe, SOF) are read into memory, through this walk over the source.
extension JPEGMarkers {
    /// The file's bytes from the start through the first SOS segment (and a few bytes past it, so a
    /// header parser never meets the end first), found by reading each segment's 4-byte head: ranges in
    /// `JPEGMarkers` built on it are the file's own offsets. Nil when the walk meets something a
    /// segment walk cannot follow (then the caller reads the whole file, as before).
    package static func headerPrefix(_ source: some ByteSource, maxLength: Int = 64 << 20) throws -> [UInt8]? {
        var head = try source.bytes(at: 0, length: 2)
        guard head == [0xFF, 0xD8] else { return nil }
        var i = 2, segments = 0, found = false
        while !found, segments < 4096 {
            head = try source.bytes(at: i, length: 4)
            guard head.count == 4, head[0] == 0xFF else { return nil }
            let marker = head[1]
            if marker == 0xFF { i += 1; continue }  // fill bytes
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xD9 { return nil }
            let length = Int(head[2]) << 8 | Int(head[3])
            guard length >= 2 else { return nil }
            i += 2 + length
            found = marker == 0xDA
            guard i < maxLength else { return nil }
            segments += 1
        }
        guard found else { return nil }
        let prefix = try source.bytes(at: 0, length: min(i + 64, source.count))
        return prefix.count >= min(i, source.count) ? prefix : nil
    }
}
