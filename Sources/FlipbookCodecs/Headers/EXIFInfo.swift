/// What Flipbook reads from EXIF / TIFF metadata. Parsing is bounds-checked throughout: malformed
/// metadata yields nil fields, never a crash.
package struct EXIFInfo: Equatable, Sendable {
    /// Tag 274 as stored, if present.
    package var orientation: Int?
    /// The embedded JPEG thumbnail (IFD1), as a byte range of the TIFF block.
    package var thumbnail: Range<Int>?
    /// ImageWidth / ImageLength of IFD0 (present in TIFF files, rarely in EXIF).
    package var width: Int?
    package var height: Int?

    /// Parses a TIFF structure ("II*\0" or "MM\0*" header).
    package init?(tiff bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return nil }

        /// Reads a SHORT or LONG scalar entry's value.
        func value(entry e: Int) -> Int? {
            guard let type = u16(e + 2) else { return nil }
            switch type {
            case 3: return u16(e + 8)
            case 4: return u32(e + 8)
            default: return nil
            }
        }
        /// Calls `body(tag, entryOffset)` for each entry; returns the next IFD's offset.
        func walk(_ ifd: Int, _ body: (Int, Int) -> Void) -> Int? {
            guard let n = u16(ifd), n <= 1000 else { return nil }
            for i in 0..<n {
                let e = ifd + 2 + i * 12
                guard let tag = u16(e) else { return nil }
                body(tag, e)
            }
            return u32(ifd + 2 + n * 12)
        }

        let next = walk(ifd0) { tag, e in
            switch tag {
            case 0x0112: orientation = value(entry: e)
            case 0x0100: width = value(entry: e)
            case 0x0101: height = value(entry: e)
            default: break
            }
        }
        if let ifd1 = next, ifd1 > 8, ifd1 < bytes.count {
            var offset: Int?, length: Int?
            _ = walk(ifd1) { tag, e in
                if tag == 0x0201 { offset = value(entry: e) }
                if tag == 0x0202 { length = value(entry: e) }
            }
            if let offset, let length, length > 0, offset > 0, offset + length <= bytes.count {
                thumbnail = offset..<(offset + length)
            }
        }
    }
}
