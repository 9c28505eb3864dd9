#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg

/// A custom AVIO context that lets libavformat read from any `ByteSource` (memory or file), with seeking
/// (SEEK_SET, SEEK_CUR, SEEK_END and AVSEEK_SIZE). The context keeps this object, and through it the
/// source, alive via its `opaque` pointer; `deinit` frees the AVIO buffer and context the way libav
/// documents (the buffer libav may have replaced, then the context).
package final class AVIOBridge {
    /// The state the C callbacks see through `opaque`.
    package final class State {
        package let source: any ByteSource
        package var position = 0
        /// What a read of the source itself threw (the only way this bridge returns EIO): otherwise an EIO
        /// from a demuxer means it met the end of the data (Matroska's reader says EIO there). libav takes a
        /// failed read for the end of the stream, so its callers rethrow this (`FormatInput.rethrowReadError`).
        package var readError: (any Error)?
        package var readFailed: Bool { readError != nil }
        package init(source: any ByteSource) { self.source = source }
    }

    package let state: State
    package private(set) var context: UnsafeMutablePointer<AVIOContext>
    private let retained: Unmanaged<State>

    /// Creates the context with a read buffer of `bufferSize` bytes (allocated with av_malloc, as required).
    package init(source: any ByteSource, bufferSize: Int = 32 * 1024) throws {
        let av = try LibAV.api()
        state = State(source: source)
        guard let buffer = av.av_malloc(bufferSize) else {
            throw FlipbookError(.codec, "av_malloc(\(bufferSize)) failed")
        }
        retained = Unmanaged.passRetained(state)
        guard let context = av.avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 0, retained.toOpaque(),
            avioRead, nil, avioSeek)
        else {
            av.av_free(buffer)
            retained.release()
            throw FlipbookError(.codec, "avio_alloc_context failed")
        }
        self.context = context
    }

    deinit {
        if let av = try? LibAV.api() {
            // libav may have reallocated the buffer: free the one the context holds now.
            av.av_freep(&context.pointee.buffer)
            var ctx: UnsafeMutablePointer<AVIOContext>? = context
            av.avio_context_free(&ctx)
        }
        retained.release()
    }
}

private func avioRead(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let opaque, let buffer, size > 0 else { return fb_averror(EINVAL) }
    let state = Unmanaged<AVIOBridge.State>.fromOpaque(opaque).takeUnretainedValue()
    // At or past the end (a demuxer seeks there in a file cut short): end of file, not a read error, which
    // libav reported as "Input/output error", as if the disk had failed.
    if state.position >= state.source.count { return fb_averror_eof() }
    do {
        let n = try state.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)), at: state.position)
        if n == 0 { return fb_averror_eof() }
        state.position += n
        return Int32(n)
    } catch {
        if state.readError == nil { state.readError = error }
        return fb_averror(EIO)
    }
}

private func avioSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(fb_averror(EINVAL)) }
    let state = Unmanaged<AVIOBridge.State>.fromOpaque(opaque).takeUnretainedValue()
    let size = Int64(state.source.count)
    // libav may OR in AVSEEK_FORCE; it means nothing for random-access sources.
    let mode = whence & ~Int32(0x20000)
    if mode == fb_avseek_size() { return size }
    let target: Int64
    switch mode {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = Int64(state.position) + offset
    case SEEK_END: target = size + offset
    default: return Int64(fb_averror(EINVAL))
    }
    guard target >= 0 else { return Int64(fb_averror(EINVAL)) }
    state.position = Int(target)  // past the end is allowed; reads there return EOF
    return target
}
