/// Video codecs for GIF conversion, with the libavcodec encoders tried for each, in order.
public enum VideoCodec: String, Sendable, CaseIterable {
    case h264, hevc, vp9, av1

    package var encoderNames: [String] {
        switch self {
        case .h264: ["libx264"]
        case .hevc: ["libx265"]
        case .vp9: ["libvpx-vp9"]
        // libaom first: SVT-AV1 1.4 refuses frames under 64 pixels and reorders frames (random access),
        // which would cost the exact last-frame duration; libaom's hidden frames stay inside one packet.
        case .av1: ["libaom-av1", "libsvtav1"]
        }
    }
}
