import CGIF

/// giflib's decoder handle over a `ByteSource`, wrapped once: statuses become throws, and `DGifCloseFile`
/// (which frees the handle on every path, even when it reports an error) is called exactly once, in deinit.
package final class GIFReader {
    /// What the read callback sees through `UserData`; retained by the reader for the handle's lifetime.
    package final class Input {
        package let source: any ByteSource
        /// Offset in `source` of the next byte giflib will get.
        package var position = 0
        /// Read-ahead: giflib asks for 1 to 255 bytes at a time, which from a file would be a pread each.
        private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        private var bufferStart = 0
        private var bufferCount = 0

        /// What the source threw, if a read failed (a broken connection, an object replaced mid-read): the
        /// decoder reports it instead of the truncation giflib then sees.
        package private(set) var readError: FlipbookError?

        package init(source: any ByteSource) { self.source = source }

        /// Copies up to `count` bytes at `position` into `destination`; returns how many.
        package func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
            var done = 0
            while done < count {
                let offset = position - bufferStart
                if offset >= 0 && offset < bufferCount {
                    let n = min(count - done, bufferCount - offset)
                    buffer.withUnsafeBufferPointer { (destination + done).update(from: $0.baseAddress! + offset, count: n) }
                    done += n
                    position += n
                    continue
                }
                bufferStart = position
                do {
                    bufferCount = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: position) }
                } catch {
                    // giflib sees a short read; the source's own error is what the decoder reports.
                    if readError == nil { readError = error as? FlipbookError ?? FlipbookError(.io, "the source could not be read", underlying: "\(error)") }
                    bufferCount = 0
                }
                if bufferCount == 0 { break }
            }
            return done
        }
    }

    package enum Record {
        case image
        /// An extension's label and its first two data sub-blocks (without length bytes); the rest are
        /// read and dropped, so a huge comment costs nothing.
        case `extension`(code: Int, blocks: [[UInt8]])
        case end
    }

    package let input: Input
    private let retained: Unmanaged<Input>
    package let gif: UnsafeMutablePointer<GifFileType>

    /// Opens the stream and reads the header and logical screen descriptor.
    package init(source: any ByteSource) throws {
        input = Input(source: source)
        retained = Unmanaged.passRetained(input)
        var error: Int32 = 0
        // On failure DGifOpen has already freed what it allocated.
        guard let handle = DGifOpen(retained.toOpaque(), gifRead, &error) else {
            retained.release()
            throw input.readError ?? Self.error(code: error, while: "reading the GIF header", bytes: source.count)
        }
        gif = handle
    }

    deinit {
        var error: Int32 = 0
        DGifCloseFile(gif, &error)
        retained.release()
    }

    package static func describe(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
    }

    package static func error(code: Int32, while what: String, bytes: Int) -> FlipbookError {
        let kind: FlipbookError.Code
        switch code {
        case D_GIF_ERR_READ_FAILED, D_GIF_ERR_EOF_TOO_SOON: kind = .truncated
        case D_GIF_ERR_NOT_GIF_FILE: kind = .unknownFormat
        case D_GIF_ERR_NOT_ENOUGH_MEM: kind = .limitExceeded
        default: kind = .corrupt
        }
        return FlipbookError(kind, "GIF is damaged \(what)", underlying: describe(code), context: "giflib")
    }

    package func error(while what: String) -> FlipbookError {
        input.readError ?? Self.error(code: gif.pointee.Error, while: what, bytes: input.source.count)
    }

    package func nextRecord() throws -> Record {
        var type = UNDEFINED_RECORD_TYPE
        guard DGifGetRecordType(gif, &type) == GIF_OK else { throw error(while: "between blocks") }
        switch type {
        case IMAGE_DESC_RECORD_TYPE: return .image
        case TERMINATE_RECORD_TYPE: return .end
        case EXTENSION_RECORD_TYPE:
            var code: Int32 = 0
            var block: UnsafeMutablePointer<GifByteType>?
            guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw error(while: "in an extension") }
            var blocks: [[UInt8]] = []
            while let current = block {
                if blocks.count < 2 { blocks.append(Array(UnsafeBufferPointer(start: current + 1, count: Int(current[0])))) }
                guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw error(while: "in an extension") }
            }
            return .extension(code: Int(code), blocks: blocks)
        default:
            throw error(while: "between blocks")
        }
    }

    /// Reads an image descriptor (and local colour table) without growing giflib's SavedImages list,
    /// which DGifGetImageDesc would extend by one entry per frame.
    package func imageHeader() throws -> GifImageDesc {
        guard DGifGetImageHeader(gif) == GIF_OK else { throw error(while: "in an image descriptor") }
        return gif.pointee.Image
    }

    /// Appends the current image's LZW data sub-blocks (without their length bytes) to `data`, through
    /// giflib's DGifGetCode/DGifGetCodeNext, and sets `codeSize` to the LZW minimum code size (DGifGetCode
    /// sets it before reading any block). Throws if the data ends before its terminating empty block;
    /// what was read is left in `data`.
    package func readImageData(into data: inout [UInt8], codeSize: inout Int) throws {
        var size: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        let status = DGifGetCode(gif, &size, &block)
        codeSize = Int(size)
        guard status == GIF_OK else { throw error(while: "in image data") }
        while let current = block {
            data.append(contentsOf: UnsafeBufferPointer(start: current + 1, count: Int(current[0])))
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { throw error(while: "in image data") }
        }
    }

    /// Skips the rest of the current image's LZW data without decoding it.
    package func skipImageData() throws {
        var block: UnsafeMutablePointer<GifByteType>?
        repeat {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { throw error(while: "in image data") }
        } while block != nil
    }
}

private func gifRead(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?, _ count: Int32) -> Int32 {
    guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
    return Int32(Unmanaged<GIFReader.Input>.fromOpaque(user).takeUnretainedValue().read(into: buffer, count: Int(count)))
}
