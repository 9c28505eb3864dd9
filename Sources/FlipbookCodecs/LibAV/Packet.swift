import CFFmpeg

/// Owns an `AVPacket`; `deinit` is the only place it is freed.
package final class Packet {
    package let pointer: UnsafeMutablePointer<AVPacket>
    package init() throws {
        guard let packet = try LibAV.api().av_packet_alloc() else { throw FlipbookError(.codec, "av_packet_alloc failed") }
        pointer = packet
    }
    /// A packet holding a copy of `bytes`, followed by the zero padding decoders require.
    package convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init()
        try LibAV.check(try LibAV.api().av_new_packet(pointer, Int32(bytes.count)), "av_new_packet")
        if let src = bytes.baseAddress, bytes.count > 0 { pointer.pointee.data.update(from: src.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
    }
    deinit {
        if let av = try? LibAV.api() {
            var packet: UnsafeMutablePointer<AVPacket>? = pointer
            av.av_packet_free(&packet)
        }
    }
}
