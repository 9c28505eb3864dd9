import CWebP

/// Owns the file's bytes for libwebp: the demuxer and the animation decoder read them in place and never
/// copy them, so they must live as long as either.
package final class WebPBytes {
    package let pointer: UnsafeMutableRawPointer
    package let count: Int

    /// Copies the source once (file sources: one read of the whole file).
    package init(_ source: any ByteSource) throws {
        count = source.count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 16)
        do {
            try source.withContiguousBytes { bytes in
                if let base = bytes.baseAddress, bytes.count == count { pointer.copyMemory(from: base, byteCount: count) }
            }
        } catch {
            pointer.deallocate()
            throw error
        }
    }

    package var bytes: UnsafePointer<UInt8> { UnsafePointer(pointer.assumingMemoryBound(to: UInt8.self)) }
    deinit { pointer.deallocate() }
}
