/// GIF's variable-width LZW decoder (GIF89a appendix F), writing rows as they complete.
///
/// giflib's DGifGetLine decodes a pixel at a time and was 85% of decode time. Here each table entry keeps
/// the last 1-8 bytes of its string in one UInt64 ("chunk") and links to the entry that holds the rest,
/// whose length is a multiple of 8 (the layout wuffs' LZW decoder uses): writing a string costs one 8-byte
/// store per 8 bytes instead of one dependent table load per byte. Tables are allocated once per decoder
/// and reused for every frame. Every code is bounds-checked: corrupt data ends the frame, never the
/// process.
package struct LZWDecoder {
    package enum Outcome: Equatable {
        /// Every row of the frame was produced.
        case complete
        /// The data ended (truncated) or turned invalid before the last row; `rows` were produced.
        case incomplete(rows: Int)
    }

    /// Length minus one of each code's string.
    private var lengthMinusOne = [UInt16](repeating: 0, count: 4096)
    /// The entry holding everything but this entry's chunk (unused when the string fits in the chunk).
    private var link = [UInt16](repeating: 0, count: 4096)
    /// The last ((length - 1) % 8) + 1 bytes of the string, little-endian, first of them in the low byte.
    private var chunk = [UInt64](repeating: 0, count: 4096)
    private var firstByte = [UInt8](repeating: 0, count: 4096)
    /// The row being filled, plus 8 bytes of slack for the wide stores.
    private var row: [UInt8] = []
    /// Strings that cross a row end are unpacked here first (4096 bytes at most, plus slack).
    private var spill = [UInt8](repeating: 0, count: 4096 + 16)

    /// Decodes `data` (the concatenated sub-blocks of one image) for a `width` x `height` frame, calling
    /// `emit(rowIndex, row)` for each completed row in stream order.
    package mutating func decode(_ data: UnsafeRawBufferPointer, minimumCodeSize: Int, width: Int, height: Int,
                         emit: (Int, UnsafeBufferPointer<UInt8>) -> Void) -> Outcome {
        guard width > 0, height > 0 else { return .complete }
        guard (1...11).contains(minimumCodeSize) else { return .incomplete(rows: 0) }
        if row.count < width + 8 { row = [UInt8](repeating: 0, count: width + 8) }
        let clear = 1 << minimumCodeSize, end = clear + 1

        return lengthMinusOne.withUnsafeMutableBufferPointer { lengthMinusOne in
            link.withUnsafeMutableBufferPointer { link in
                chunk.withUnsafeMutableBufferPointer { chunk in
                    firstByte.withUnsafeMutableBufferPointer { firstByte in
                        row.withUnsafeMutableBytes { rowBytes in
                            spill.withUnsafeMutableBytes { spillBytes in
                                for i in 0..<min(clear, 4096) {
                                    lengthMinusOne[i] = 0
                                    chunk[i] = UInt64(i & 0xFF)
                                    firstByte[i] = UInt8(truncatingIfNeeded: i)
                                }
                                let input = data.bindMemory(to: UInt8.self)
                                let rowBase = rowBytes.baseAddress!, spillBase = spillBytes.baseAddress!

                                /// Writes the string of `code` so that it ends just before `end`.
                                @inline(__always)
                                func write(_ code: Int, endingAt end: UnsafeMutableRawPointer, length: Int) {
                                    var c = code
                                    var e = end
                                    var remaining = length
                                    while remaining > 0 {
                                        let r = Int(lengthMinusOne[c] & 7) + 1
                                        e -= r
                                        e.storeBytes(of: chunk[c].littleEndian, as: UInt64.self)  // may spill past `end`: slack
                                        remaining -= r
                                        c = Int(link[c])
                                    }
                                }

                                var codeSize = minimumCodeSize + 1, mask = (1 << codeSize) - 1
                                var next = clear + 2
                                var previous = -1
                                var bits: UInt64 = 0, bitCount = 0, position = 0
                                var x = 0, rowsDone = 0

                                while true {
                                    // Refill whole bytes while there is room in the 64-bit buffer.
                                    while bitCount <= 56 && position < input.count {
                                        bits |= UInt64(input[position]) << UInt64(bitCount)
                                        position += 1
                                        bitCount += 8
                                    }
                                    guard bitCount >= codeSize else { return .incomplete(rows: rowsDone) }
                                    let code = Int(bits & UInt64(mask))
                                    bits >>= UInt64(codeSize)
                                    bitCount -= codeSize

                                    if code == clear {
                                        codeSize = minimumCodeSize + 1
                                        mask = (1 << codeSize) - 1
                                        next = clear + 2
                                        previous = -1
                                        continue
                                    }
                                    if code == end { return rowsDone == height ? .complete : .incomplete(rows: rowsDone) }
                                    if previous < 0 {
                                        guard code < clear else { return .incomplete(rows: rowsDone) }
                                    } else if next < 4096 {
                                        guard code <= next else { return .incomplete(rows: rowsDone) }
                                        // New entry: the previous string plus the first byte of this one (or, for a
                                        // code not yet defined, of the previous one: the KwKwK case).
                                        let appended = UInt64(code < next ? firstByte[code] : firstByte[previous])
                                        let prevLength = Int(lengthMinusOne[previous]) + 1
                                        let used = prevLength & 7  // bytes in the previous chunk, 0 meaning 8
                                        if used != 0 {
                                            chunk[next] = chunk[previous] | appended << UInt64(8 * used)
                                            link[next] = link[previous]
                                        } else {
                                            chunk[next] = appended
                                            link[next] = UInt16(previous)
                                        }
                                        lengthMinusOne[next] = UInt16(prevLength)
                                        firstByte[next] = firstByte[previous]
                                        next += 1
                                        if next == mask + 1 && codeSize < 12 {
                                            codeSize += 1
                                            mask = (1 << codeSize) - 1
                                        }
                                    } else {
                                        guard code < 4096 else { return .incomplete(rows: rowsDone) }  // full table: no new entries
                                    }
                                    previous = code

                                    /// Hands a full row on; true when it was the frame's last.
                                    @inline(__always)
                                    func rowFilled() -> Bool {
                                        emit(rowsDone, UnsafeBufferPointer(start: rowBase.assumingMemoryBound(to: UInt8.self), count: width))
                                        rowsDone += 1
                                        x = 0
                                        return rowsDone == height
                                    }

                                    let count = Int(lengthMinusOne[code]) + 1
                                    if x + count <= width {
                                        write(code, endingAt: rowBase + x + count, length: count)
                                        x += count
                                        if x == width && rowFilled() { return .complete }
                                    } else {
                                        // Crosses a row end: unpack into the spill buffer, then copy row by row.
                                        write(code, endingAt: spillBase + 8 + count, length: count)
                                        var done = 0
                                        while done < count {
                                            let n = min(width - x, count - done)
                                            (rowBase + x).copyMemory(from: spillBase + 8 + done, byteCount: n)
                                            x += n
                                            done += n
                                            if x == width && rowFilled() { return .complete }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
