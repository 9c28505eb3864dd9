import CFFmpeg

/// A decoded frame's pixel format as the plane-level code (box shrink, frame signatures) needs it: planar,
/// one 8-bit or one 9-16-bit little-endian sample per position, no palette, bitstream or hardware
/// surface. That is every YUV and planar RGB layout software decoders produce.
package struct PlanarLayout {
    /// The format's components (Y, Cb, Cr, alpha or G, B, R, alpha), in libav's order.
    package let components: [AVComponentDescriptor]
    /// Bytes per sample: 1 or 2, the same for every component.
    package let step: Int
    /// Planes in use.
    package let planes: Int
    private let log2ChromaW: Int, log2ChromaH: Int

    package init?(_ format: Int32) {
        guard let av = try? LibAV.api(), let desc = av.av_pix_fmt_desc_get(AVPixelFormat(rawValue: format)) else { return nil }
        let d = desc.pointee
        let unsupported = UInt64(AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL)
        guard d.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0, d.flags & unsupported == 0 else { return nil }
        components = withUnsafeBytes(of: d.comp) { Array($0.bindMemory(to: AVComponentDescriptor.self).prefix(Int(d.nb_components))) }
        guard let first = components.first?.step, first == 1 || first == 2,
              components.allSatisfy({ $0.step == first && $0.offset == 0 && $0.shift == 0 }) else { return nil }
        step = Int(first)
        planes = Int(components.map(\.plane).max() ?? 0) + 1
        log2ChromaW = Int(d.log2_chroma_w)
        log2ChromaH = Int(d.log2_chroma_h)
    }

    /// Plane `p`'s size for a `width` x `height` frame: libav subsamples planes 1 and 2 (chroma) and
    /// rounds up; plane 0 and alpha are full size.
    package func planeSize(_ p: Int, width: Int, height: Int) -> (width: Int, height: Int) {
        let chroma = p == 1 || p == 2
        return (-((-width) >> (chroma ? log2ChromaW : 0)), -((-height) >> (chroma ? log2ChromaH : 0)))
    }
}
