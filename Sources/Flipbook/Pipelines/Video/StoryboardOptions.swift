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
    }
}
