/// One decode of a source's pixels, as `MediaInput.onDecode` reports it: which decoder ran and the size of
/// the image it produced (reduced where the format decodes at a smaller size). Header reads and probes are
/// not decodes. Made for counting: a test asserting that an ingest decodes its source once, statistics.
public struct DecodeEvent: Sendable, Equatable {
    /// The source's sniffed type.
    public var type: MediaType
    /// The decoder: `libjpeg`, `libjpeg exif-thumbnail`, `libpng`, `libwebp`, `libheif`, `libavcodec`.
    public var decoder: String
    /// The decoded image's width (stored grid, before orientation).
    public var width: Int
    /// The decoded image's height.
    public var height: Int

    /// An event for `decoder` having produced a `width` x `height` image of a `type` source.
    public init(type: MediaType, decoder: String, width: Int, height: Int) {
        self.type = type
        self.decoder = decoder
        self.width = width
        self.height = height
    }
}
