/// Opens the right frame source for a sniffed type.
public enum FrameSources {
    /// Whether `type` is an animation a `FrameSource` decodes.
    public static func accepts(_ type: MediaType) -> Bool { [.gif, .animatedWebP, .apng].contains(type) }

    /// A frame source for `source`: GIF, animated WebP or APNG (sniffed from its bytes). Reads and checks
    /// the headers against `limits` (canvas, frames, duration) before allocating; throws `.unsupported`
    /// for anything else. `decode` carries the GIF decoder's options (strictness, cancellation); with no
    /// `limits`, `decode.limits` apply to every format.
    public static func open(_ source: any ByteSource, decode: GIFDecodeOptions = GIFDecodeOptions(),
                            limits: Limits? = nil) throws -> any FrameSource {
        try open(source, type: MediaType.sniff(source), decode: decode, limits: limits ?? decode.limits)
    }

    /// A frame source for `source`, already sniffed as `type`. `streaming`: the caller reads the frames
    /// once, in order, and needs no frame count up front, so a GIF is read and parsed once instead of
    /// being scanned first (see `GIFFrameSource`); WebP and APNG read their headers either way.
    static func open(_ source: any ByteSource, type: MediaType, decode: GIFDecodeOptions, limits: Limits,
                     streaming: Bool = false) throws -> any FrameSource {
        switch type {
        case .gif where streaming: return try GIFFrameSource(streaming: source, options: decode, limits: limits)
        case .gif: return try GIFFrameSource(source: source, options: decode, limits: limits)
        case .animatedWebP: return try WebPFrameSource(source: source, limits: limits, isCancelled: decode.isCancelled)
        case .apng: return try APNGFrameSource(source: source, limits: limits, strict: decode.strict, isCancelled: decode.isCancelled)
        case let other:
            throw FlipbookError(.unsupported, "not an animation (GIF, animated WebP or APNG): \(other)")
        }
    }
}
