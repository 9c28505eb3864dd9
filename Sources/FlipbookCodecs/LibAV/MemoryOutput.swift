#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg

/// A growable in-memory file that libavformat writes through a custom AVIO context, with the seeks the
/// MP4 muxer needs (it rewrites box sizes) and reads for `+faststart`'s second pass, which movenc opens
/// through `AVFormatContext.io_open`: `install(on:)` routes that to a reader over the same bytes, so no
/// temporary file is ever made.
package final class MemoryOutput {
    /// The file's bytes.
    package private(set) var bytes: [UInt8] = []

    /// Cursor state shared with the C callbacks; one per AVIO context over `bytes`.
    package final class Cursor {
        package unowned let output: MemoryOutput
        package var position = 0
        package init(_ output: MemoryOutput) { self.output = output }
    }

    private var contexts: [(UnsafeMutablePointer<AVIOContext>, Unmanaged<Cursor>)] = []

    /// A writable (and readable, seekable) AVIO context over the bytes. Freed by this object.
    package func makeContext(writable: Bool) throws -> UnsafeMutablePointer<AVIOContext> {
        let av = try LibAV.api()
        let size = 64 * 1024
        guard let buffer = av.av_malloc(size) else { throw FlipbookError(.codec, "av_malloc failed") }
        let cursor = Unmanaged.passRetained(Cursor(self))
        guard let ctx = av.avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), writable ? 1 : 0,
                                              cursor.toOpaque(), memoryRead, writable ? memoryWrite : nil, memorySeek)
        else {
            av.av_free(buffer)
            cursor.release()
            throw FlipbookError(.codec, "avio_alloc_context failed")
        }
        contexts.append((ctx, cursor))
        return ctx
    }

    /// Frees one context made by `makeContext` (used by io_close2).
    package func close(_ ctx: UnsafeMutablePointer<AVIOContext>) {
        guard let i = contexts.firstIndex(where: { $0.0 == ctx }) else { return }
        free(contexts.remove(at: i))
    }

    private func free(_ entry: (UnsafeMutablePointer<AVIOContext>, Unmanaged<Cursor>)) {
        guard let av = try? LibAV.api() else { return }
        var ctx: UnsafeMutablePointer<AVIOContext>? = entry.0
        av.av_freep(&entry.0.pointee.buffer)  // libav may have replaced the buffer: free the current one
        av.avio_context_free(&ctx)
        entry.1.release()
    }

    /// Routes the muxer's second-pass opens (faststart) to readers over these bytes.
    package func install(on format: UnsafeMutablePointer<AVFormatContext>) {
        format.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        format.pointee.io_open = memoryIOOpen
        format.pointee.io_close2 = memoryIOClose
    }

    fileprivate func write(_ data: UnsafePointer<UInt8>, count: Int, at position: Int) {
        if position > bytes.count { bytes.append(contentsOf: repeatElement(0, count: position - bytes.count)) }
        let overlap = min(count, bytes.count - position)
        if overlap > 0 {
            bytes.withUnsafeMutableBufferPointer { (($0.baseAddress! + position)).update(from: data, count: overlap) }
        }
        if count > overlap { bytes.append(contentsOf: UnsafeBufferPointer(start: data + overlap, count: count - overlap)) }
    }

    deinit {
        for entry in contexts { free(entry) }
    }
}

private func cursor(_ opaque: UnsafeMutableRawPointer?) -> MemoryOutput.Cursor {
    Unmanaged<MemoryOutput.Cursor>.fromOpaque(opaque!).takeUnretainedValue()
}

private func memoryWrite(_ opaque: UnsafeMutableRawPointer?, _ data: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let data, size >= 0 else { return fb_averror(EINVAL) }
    let c = cursor(opaque)
    c.output.write(data, count: Int(size), at: c.position)
    c.position += Int(size)
    return size
}

private func memoryRead(_ opaque: UnsafeMutableRawPointer?, _ data: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let data, size > 0 else { return fb_averror(EINVAL) }
    let c = cursor(opaque)
    let available = c.output.bytes.count - c.position
    guard available > 0 else { return fb_averror_eof() }
    let n = min(Int(size), available)
    c.output.bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress! + c.position, count: n) }
    c.position += n
    return Int32(n)
}

private func memorySeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    let c = cursor(opaque)
    let mode = whence & ~Int32(0x20000)  // AVSEEK_FORCE
    if mode == fb_avseek_size() { return Int64(c.output.bytes.count) }
    let target: Int64
    switch mode {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = Int64(c.position) + offset
    case SEEK_END: target = Int64(c.output.bytes.count) + offset
    default: return Int64(fb_averror(EINVAL))
    }
    guard target >= 0 else { return Int64(fb_averror(EINVAL)) }
    c.position = Int(target)
    return target
}

private func memoryIOOpen(_ s: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                          _ url: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let s, let pb, let opaque = s.pointee.opaque else { return fb_averror(EINVAL) }
    let output = Unmanaged<MemoryOutput>.fromOpaque(opaque).takeUnretainedValue()
    guard let ctx = try? output.makeContext(writable: flags & AVIO_FLAG_WRITE != 0) else { return fb_averror(ENOMEM) }
    pb.pointee = ctx
    return 0
}

private func memoryIOClose(_ s: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<AVIOContext>?) -> Int32 {
    guard let s, let pb, let opaque = s.pointee.opaque else { return 0 }
    Unmanaged<MemoryOutput>.fromOpaque(opaque).takeUnretainedValue().close(pb)
    return 0
}
