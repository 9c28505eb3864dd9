import CFFmpeg

/// x264's "user data unregistered" SEI: a NAL unit in the first access unit that holds x264's version and its
/// whole option string as text (about 700 bytes with Flipbook's settings). No decoder needs it; on a small
/// animation it is 5-20% of the file (the peer's `-tune animation` encode of a 5-frame 100x100 GIF is 7560
/// bytes, 6871 without it). libavcodec's libx264 wrapper prepends it to the first packet; `strip` takes it
/// out of that packet before the muxer sees it. Everything else in the packet is kept byte for byte.
package enum X264InfoSEI {
    /// x264's UUID for its SEI (dc45e9bd-e6d9-48b7-962c-d820d923eeef), after the payload type and size.
    package static let uuid: [UInt8] = [0xdc, 0x45, 0xe9, 0xbd, 0xe6, 0xd9, 0x48, 0xb7, 0x96, 0x2c, 0xd8, 0x20, 0xd9, 0x23, 0xee, 0xef]

    /// The byte range of x264's SEI NAL unit in an Annex B access unit, its start code included (the
    /// next unit's start code is not), or nil when there is none.
    package static func range(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let n = bytes.count
        // Offsets of the first byte after each 00 00 01 start code, and where each start code begins (a
        // preceding zero byte belongs to a 4-byte start code).
        var units: [(prefix: Int, payload: Int)] = []
        var i = 0
        while i + 2 < n {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                units.append((i > 0 && bytes[i - 1] == 0 ? i - 1 : i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        for (k, unit) in units.enumerated() {
            let end = k + 1 < units.count ? units[k + 1].prefix : n
            var p = unit.payload
            guard p < end, bytes[p] & 0x1F == 6 else { continue }
            p += 1
            guard p < end, bytes[p] == 5 else { continue }  // payload type 5: user data unregistered
            p += 1
            while p < end, bytes[p] == 0xFF { p += 1 }  // payload size, 255 per 0xFF byte plus the last
            p += 1
            guard p + uuid.count <= end, zip(uuid.indices, uuid).allSatisfy({ bytes[p + $0.0] == $0.1 }) else { continue }
            return unit.prefix..<end
        }
        return nil
    }

    /// Removes x264's SEI from `packet` (Annex B) if it holds one and something else. Returns the bytes removed.
    @discardableResult
    package static func strip(_ packet: UnsafeMutablePointer<AVPacket>) throws -> Int {
        guard let data = packet.pointee.data, packet.pointee.size > 0 else { return 0 }
        let size = Int(packet.pointee.size)
        guard let cut = range(in: UnsafeBufferPointer(start: data, count: size)), cut.count < size else { return 0 }
        let av = try LibAV.api()
        try LibAV.check(av.av_packet_make_writable(packet), "av_packet_make_writable")
        let bytes = packet.pointee.data!
        (bytes + cut.lowerBound).update(from: bytes + cut.upperBound, count: size - cut.upperBound)
        let newSize = size - cut.count
        // Decoders read up to AV_INPUT_BUFFER_PADDING_SIZE (64) bytes past the end, which must be zero;
        // the buffer still has the old size plus that padding.
        (bytes + newSize).update(repeating: 0, count: min(64, cut.count))
        packet.pointee.size = Int32(newSize)
        return cut.count
    }
}
