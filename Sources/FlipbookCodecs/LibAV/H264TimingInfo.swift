import CFFmpeg

/// Rewrites the timing info of an H.264 sequence parameter set (the VUI's `num_units_in_tick` and
/// `time_scale`) in Annex B extradata, leaving every other field as x264 wrote it.
///
/// Why: at a variable rate x264 writes its time base into the timing info (a millisecond, or finer: 1000 fps
/// and more), and only a constant-rate x264 (`force-cfr`) writes a frame rate there, which also makes its
/// rate control treat every frame as lasting alike: measured 35% more bytes on a screen recording whose
/// frames last 60 ms to 1 s (terminalizer's window.gif, crf 26). ffmpeg 5.1 takes every packet's duration
/// from this rate when the stream has B-frames (`SampleTiming.averaged`), so Flipbook encodes at a variable
/// rate and then writes the average frame here. Both fields are fixed-size, so only emulation prevention
/// bytes can change the unit's length. Costs one pass over the header bytes, once per file.
package enum H264TimingInfo {
    /// `extradata` (Annex B: start codes, then SPS and PPS) with the first SPS's timing info set to a frame
    /// every `numUnitsInTick * 2 / timeScale` seconds (H.264's ticks are fields), or nil when it holds no SPS
    /// this can parse or that SPS has no timing info.
    package static func rewrite(_ extradata: [UInt8], numUnitsInTick: UInt32, timeScale: UInt32) -> [UInt8]? {
        var units: [Range<Int>] = []  // NAL unit payloads, after their start codes
        var i = 0, start: Int?
        while i + 2 < extradata.count {
            if extradata[i] == 0, extradata[i + 1] == 0, extradata[i + 2] == 1 {
                if let s = start { units.append(s..<(extradata[i - 1] == 0 && i - 1 >= s ? i - 1 : i)) }
                start = i + 3
                i += 3
            } else {
                i += 1
            }
        }
        if let s = start { units.append(s..<extradata.count) }
        guard let sps = units.first(where: { !$0.isEmpty && extradata[$0.lowerBound] & 0x1F == 7 }) else { return nil }
        var rbsp = unescape(Array(extradata[sps]))
        guard let at = timingOffset(rbsp) else { return nil }
        var writer = BitWriter(bytes: rbsp)
        writer.write(UInt64(numUnitsInTick), bits: 32, at: at)
        writer.write(UInt64(timeScale), bits: 32, at: at + 32)
        rbsp = writer.bytes
        return Array(extradata[..<sps.lowerBound]) + escape(rbsp) + Array(extradata[sps.upperBound...])
    }

    /// The bit offset of `num_units_in_tick` in an SPS's RBSP (its NAL header byte included), or nil.
    static func timingOffset(_ rbsp: [UInt8]) -> Int? {
        var r = BitReader(bytes: rbsp)
        guard let header = r.bits(8), header & 0x1F == 7, let profile = r.bits(8), r.bits(16) != nil, r.ue() != nil else { return nil }
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let chroma = r.ue() else { return nil }
            if chroma == 3 { guard r.bits(1) != nil else { return nil } }
            guard r.ue() != nil, r.ue() != nil, r.bits(1) != nil, let scaling = r.bits(1) else { return nil }
            if scaling == 1 {
                for list in 0..<(chroma == 3 ? 12 : 8) {
                    guard let present = r.bits(1) else { return nil }
                    if present == 1 {
                        var last = 8, next = 8
                        for _ in 0..<(list < 6 ? 16 : 64) where next != 0 {
                            guard let delta = r.se() else { return nil }
                            next = (last + delta + 256) % 256
                            last = next == 0 ? last : next
                        }
                    }
                }
            }
        }
        guard r.ue() != nil, let pocType = r.ue() else { return nil }  // log2_max_frame_num_minus4
        if pocType == 0 {
            guard r.ue() != nil else { return nil }
        } else if pocType == 1 {
            guard r.bits(1) != nil, r.se() != nil, r.se() != nil, let cycle = r.ue(), cycle < 256 else { return nil }
            for _ in 0..<cycle { guard r.se() != nil else { return nil } }
        }
        guard r.ue() != nil, r.bits(1) != nil, r.ue() != nil, r.ue() != nil, let frameMbsOnly = r.bits(1) else { return nil }
        if frameMbsOnly == 0 { guard r.bits(1) != nil else { return nil } }
        guard r.bits(1) != nil, let cropping = r.bits(1) else { return nil }
        if cropping == 1 { for _ in 0..<4 { guard r.ue() != nil else { return nil } } }
        guard r.bits(1) == 1 else { return nil }  // vui_parameters_present_flag
        guard let aspect = r.bits(1) else { return nil }
        if aspect == 1 {
            guard let idc = r.bits(8) else { return nil }
            if idc == 255 { guard r.bits(32) != nil else { return nil } }
        }
        guard let overscan = r.bits(1) else { return nil }
        if overscan == 1 { guard r.bits(1) != nil else { return nil } }
        guard let signal = r.bits(1) else { return nil }
        if signal == 1 {
            guard r.bits(4) != nil, let colour = r.bits(1) else { return nil }
            if colour == 1 { guard r.bits(24) != nil else { return nil } }
        }
        guard let chromaLocation = r.bits(1) else { return nil }
        if chromaLocation == 1 { guard r.ue() != nil, r.ue() != nil else { return nil } }
        guard r.bits(1) == 1, r.position + 65 <= rbsp.count * 8 else { return nil }  // timing_info_present_flag
        return r.position
    }

    /// A NAL unit's payload without its emulation prevention bytes (00 00 03 -> 00 00).
    static func unescape(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        out.reserveCapacity(bytes.count)
        for b in bytes {
            if zeros >= 2, b == 3 { zeros = 0; continue }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// An RBSP with emulation prevention bytes inserted, so no start code appears inside it.
    static func escape(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        out.reserveCapacity(rbsp.count + 4)
        for b in rbsp {
            if zeros >= 2, b <= 3 { out.append(3); zeros = 0 }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    struct BitReader {
        let bytes: [UInt8]
        var position = 0

        mutating func bits(_ count: Int) -> UInt64? {
            guard position + count <= bytes.count * 8 else { return nil }
            var value: UInt64 = 0
            for _ in 0..<count {
                value = value << 1 | UInt64(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
                position += 1
            }
            return value
        }

        /// Unsigned Exp-Golomb.
        mutating func ue() -> Int? {
            var zeros = 0
            while true {
                guard let bit = bits(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                if zeros > 31 { return nil }
            }
            guard let rest = bits(zeros) else { return nil }
            return Int((1 << zeros) - 1 + rest)
        }

        /// Signed Exp-Golomb.
        mutating func se() -> Int? {
            guard let k = ue() else { return nil }
            return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
        }
    }

    struct BitWriter {
        var bytes: [UInt8]

        mutating func write(_ value: UInt64, bits count: Int, at offset: Int) {
            for k in 0..<count {
                let bit = UInt8(value >> UInt64(count - 1 - k) & 1)
                let p = offset + k
                let mask = UInt8(0x80) >> UInt8(p & 7)
                bytes[p >> 3] = bit == 1 ? bytes[p >> 3] | mask : bytes[p >> 3] & ~mask
            }
        }
    }
}
