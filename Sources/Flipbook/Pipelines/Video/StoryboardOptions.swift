/// How to sample a storyboard. Every property documents its default.
public struct StoryboardOptions: Sendable {
    /// Seconds between tiles (default 10), unless `count` is set.
    public var interval = 10.0
    /// Exactly this many tiles spread over the duration (overrides `interval`).
    public var count: Int?
    /// Tiles per row. Default 10.
    public var columns = 10
    /// Longer side of a tile, in pixels. Default 160.
    public var tileSize = 160
    /// Largest sheet side, in pixels; more tiles go to further sheets. Default 16,000 (browsers'
    /// texture limits sit near 16,384).
    public var maxSheetSide = 16_000
    /// JPEG quality of the sheets. Default 75.
    public var quality = 75
    /// Most tiles (a guard against tiny intervals on long videos). Default 10,000.
    public var maxTiles = 10_000
    /// Decoder threads. Default nil: automatic, as many frame threads as the cores allow (at most 4) while
    /// the frames they hold in flight stay within 64 MB, which is one thread for 8K (each 8K frame with the
    /// decoder's tables for it is ~70 MB). More threads hold more decoded frames: `storyboard --count 10`
    /// on the corpus's 8K HEVC clip takes 0.6x the time with 2 threads and peaks at ~314 MB instead of
    /// ~274 MB (`bench/posters.py`), as ffmpeg's `-threads` trades the same way.
    public var decodeThreads: Int?
    /// Polled between tiles; returning true stops with `.cancelled`. Default nil.
    public var isCancelled: (@Sendable () -> Bool)?

    /// Every option at its documented default.
    public init() {}
}

extension StoryboardOptions {
    func validate() throws {
        guard columns > 0, tileSize > 0, interval > 0 else {
            throw FlipbookError(.invalidArgument, "columns, tile size and interval must be positive")
        }
        if let decodeThreads, !(1...16).contains(decodeThreads) {
            throw FlipbookError(.invalidArgument, "decoder threads must be 1 to 16")
        }
    }
}
